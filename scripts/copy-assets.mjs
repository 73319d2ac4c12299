// tsc compiles only TypeScript: the numbered SQL migrations and the SQLite checkpoint thread (plain
// JavaScript: a worker thread starts from a .js file, also under the test runner) ship beside the
// compiled store code, and the client's generated types
// (a .d.ts, which tsc does not emit) beside the compiled client.
import { cpSync, existsSync, readdirSync } from 'node:fs'

for (const store of ['sqlite', 'postgres']) {
  const from = `src/store/${store}/migrations`
  if (existsSync(from)) cpSync(from, `dist/store/${store}/migrations`, { recursive: true })
}
for (const file of readdirSync('src/store/sqlite').filter((name) => name.endsWith('.js'))) {
  cpSync(`src/store/sqlite/${file}`, `dist/store/sqlite/${file}`)
}
cpSync('src/client/schema.d.ts', 'dist/client/schema.d.ts')
