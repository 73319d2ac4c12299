// tsc compiles only TypeScript: the numbered SQL migrations and the SQLite checkpoint thread (plain
// JavaScript: a worker thread starts from a .js file, also under the test runner) ship beside the
// compiled store code, and the client's generated types
// (a .d.ts, which tsc does not emit) beside the compiled client.
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs'

for (const store of ['sqlite', 'postgres']) {
  const from = `src/store/${store}/migrations`
  const to = `dist/store/${store}/migrations`
  // Replaced whole: a migration a later build no longer has must not still be applied from dist.
  rmSync(to, { recursive: true, force: true })
  if (existsSync(from)) cpSync(from, to, { recursive: true })
}
for (const file of readdirSync('src/store/sqlite').filter((name) => name.endsWith('.js'))) {
  cpSync(`src/store/sqlite/${file}`, `dist/store/sqlite/${file}`)
}
cpSync('src/client/schema.d.ts', 'dist/client/schema.d.ts')
