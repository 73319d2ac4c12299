// The client's types are generated from the published OpenAPI document, which is itself generated
// from the route schemas: `npm run client:generate` rewrites src/client/schema.d.ts, and a test
// regenerates it into a temporary folder and fails when the checked-in file differs.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import ts from 'typescript'
import { buildApp } from '../src/app.js'
import { openSqlite } from '../src/store/sqlite/index.js'
import { TokenService } from '../src/tokens/service.js'

/** The document /openapi.json serves, built from a throwaway in-memory instance. */
export async function publishedDocument(): Promise<OpenAPI3> {
  const store = openSqlite({ path: ':memory:' })
  const app = await buildApp({ store, tokens: new TokenService(store.tokens) })
  await app.ready()
  const document = structuredClone(app.swagger()) as unknown as OpenAPI3
  await app.close()
  await store.close()
  return document
}

const HEADER = `// Generated from the OpenAPI document by \`npm run client:generate\`: do not edit.
// int64 values are typed bigint: the client parses them exactly (see ./json.ts).

`

export async function clientSchemaSource(): Promise<string> {
  const ast = await openapiTS(await publishedDocument(), {
    // Ids past 2^53 do not fit a number; the client carries them as bigint, as the service does.
    transform: (schema) =>
      schema.format === 'int64' ? ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword) : undefined,
  })
  return HEADER + astToString(ast)
}

if (process.argv[1]?.endsWith('generate-client.ts')) {
  const target = resolve(process.argv[2] ?? 'src/client/schema.d.ts')
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, await clientSchemaSource())
}
