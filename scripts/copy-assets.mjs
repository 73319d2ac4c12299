// tsc compiles only TypeScript; the numbered SQL migrations ship beside the compiled store code.
import { cpSync, existsSync } from 'node:fs'

for (const store of ['sqlite', 'postgres']) {
  const from = `src/store/${store}/migrations`
  if (existsSync(from)) cpSync(from, `dist/store/${store}/migrations`, { recursive: true })
}
