// tsc compiles only TypeScript: the numbered SQL migrations ship beside the compiled store code, and
// the client's generated types (a .d.ts, which tsc does not emit) beside the compiled client.
import { cpSync, existsSync } from 'node:fs'

for (const store of ['sqlite', 'postgres']) {
  const from = `src/store/${store}/migrations`
  if (existsSync(from)) cpSync(from, `dist/store/${store}/migrations`, { recursive: true })
}
cpSync('src/client/schema.d.ts', 'dist/client/schema.d.ts')
