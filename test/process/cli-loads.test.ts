import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AUDIENCE, ISSUER, serveJwks } from '../helpers/jwks.js'
import { ROOT, runCli, startServer } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

const RECORDER = join(ROOT, 'test/helpers/record-loads.mjs')

/** Runs the real CLI and returns, with what it answered, the URL of every module it loaded. */
async function loadsOf(args: string[]) {
  const record = join(tempDir(), 'loads.txt')
  const result = await runCli(args, {
    RECORD_LOADS: record,
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${RECORDER}`].filter(Boolean).join(' '),
  })
  // An ES module that is CommonJS too (a package's entry) is recorded twice.
  const loads = [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))]
  return { ...result, loads }
}

/** What a command has no use for unless it serves, or works on plants or webhooks. */
const SERVING = [
  /\/node_modules\/(fastify|@fastify\/[^/]+|pino|lossless-json)\//,
  /\/dist\/(app|log)\.js$/,
  /\/dist\/http\//,
  /\/dist\/webhooks\//,
]
/** PostgreSQL's driver and store, for a command given a SQLite database. */
const POSTGRES = [/\/node_modules\/(pg|pg-pool|pg-protocol)\//, /\/dist\/store\/postgres\//]
/** The SQLite store's plants, events and webhooks, which a token command never runs. */
const SQLITE_BEYOND_TOKENS = /\/dist\/store\/sqlite\/(index|plants|events|webhooks|fan-out|writer|batch)\.js$/
/** OpenTelemetry's SDK and API, and the code that starts them: loaded only when tracing is on. */
const TRACING = [/\/node_modules\/@opentelemetry\//, /\/dist\/tracing\/(sdk|http|store-spans|command)\.js$/]
/** jose and the JWT verifier: loaded only by a server given --jwt-jwks-url. */
const JWT = [/\/node_modules\/jose\//, /\/dist\/tokens\/jwt\.js$/]
/**
 * TypeBox and Ajv's compiler: the CLI checks its input with validators generated from the schemas at
 * build time (its runtime helpers, under ajv/dist/runtime, are all it loads of Ajv).
 */
const SCHEMA_COMPILING = [
  /\/node_modules\/typebox\//,
  /\/node_modules\/ajv\/dist\/(ajv|core|compile|vocabularies)\b/,
]
/** Any store at all. */
const STORES = [/\/node_modules\/better-sqlite3\//, /\/dist\/store\/(sqlite|postgres)\//]

const matching = (loads: string[], patterns: RegExp[]) =>
  loads.filter((url) => patterns.some((pattern) => pattern.test(url)))

// Each command loads its implementation when it runs: the help and a token command start without
// the code of the commands they are not (docs/performance.md, Start-up).
describe('what a command loads', () => {
  it.each([
    [['--help']],
    [['--version']],
    [['token', 'create', '--help']],
    [['serve', '--help']],
    [['health', '--help']],
  ])(
    'plantstore %j loads no store, logger, framework, driver, tracing, JWT, webhook or schema-compiling code',
    async (args) => {
      const { code, loads } = await loadsOf(args)
      expect(code).toBe(0)
      // What it does load is seen: a recording that saw nothing would pass the rest.
      expect(loads).toContainEqual(expect.stringMatching(/\/dist\/cli\/main\.js$/))
      expect(loads).toContainEqual(expect.stringMatching(/\/node_modules\/commander\//))
      expect(
        matching(loads, [...SERVING, ...POSTGRES, ...STORES, ...TRACING, ...JWT, ...SCHEMA_COMPILING]),
      ).toEqual([])
    },
  )

  it('plantstore token create on SQLite loads the tokens of the store, and no framework, driver, tracing, JWT, webhook or schema-compiling code', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const { code, stdout, loads } = await loadsOf(['token', 'create', '--database-url', url, '--name', 'x'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^pst_/)
    expect(loads).toContainEqual(expect.stringMatching(/\/dist\/store\/sqlite\/tokens\.js$/))
    expect(loads).toContainEqual(expect.stringMatching(/\/node_modules\/better-sqlite3\//))
    // Its options are checked, by the generated validators.
    expect(loads).toContainEqual(expect.stringMatching(/\/dist\/tokens\/shape-validators\.js$/))
    expect(
      matching(loads, [
        ...SERVING,
        ...POSTGRES,
        SQLITE_BEYOND_TOKENS,
        ...TRACING,
        ...JWT,
        ...SCHEMA_COMPILING,
      ]),
    ).toEqual([])
  })

  it('plantstore token roll loads neither TypeBox nor Ajv’s compiler', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const created = await loadsOf(['token', 'create', '--database-url', url, '--name', 'x'])
    const id = created.stdout.slice(4, 20)
    const { code, stdout, loads } = await loadsOf([
      'token',
      'roll',
      id,
      '--database-url',
      url,
      '--overlap',
      '1h',
    ])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^pst_/)
    expect(loads).toContainEqual(expect.stringMatching(/\/dist\/tokens\/shape-validators\.js$/))
    expect(matching(loads, SCHEMA_COMPILING)).toEqual([])
  })

  it('plantstore import checks its lines without TypeBox or Ajv’s compiler', async () => {
    const file = join(tempDir(), 'plants.jsonl')
    writeFileSync(file, '{"id":1,"name":"Fern"}\n{"id":2,"name":""}\n')
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const { code, stdout, stderr, loads } = await loadsOf(['import', file, '--database-url', url])
    // The second line is refused in the words of POST /plants, so its check ran.
    expect(code).toBe(1)
    expect(`${stdout}${stderr}`).toContain('line 2: 40007')
    expect(loads).toContainEqual(expect.stringMatching(/\/dist\/plants\/shape-validators\.js$/))
    expect(matching(loads, [/\/dist\/http\//, ...SCHEMA_COMPILING])).toEqual([])
  })

  it('plantstore serve loads jose only when given a JWKS URL', async () => {
    const jwks = await serveJwks([])
    try {
      const settings = { JWT_JWKS_URL: jwks.url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }
      for (const env of [{}, settings] as Record<string, string>[]) {
        const record = join(tempDir(), 'loads.txt')
        const server = await startServer(['--database-url', 'sqlite::memory:'], {
          ...env,
          RECORD_LOADS: record,
          NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${RECORDER}`].filter(Boolean).join(' '),
        })
        try {
          expect((await fetch(`${server.url}/plants`)).status).toBe(401)
        } finally {
          await server.end()
        }
        const loads = readFileSync(record, 'utf8').split('\n')
        expect(loads).toContainEqual(expect.stringMatching(/\/dist\/app\.js$/))
        expect(matching(loads, JWT).length > 0).toBe('JWT_JWKS_URL' in env)
      }
    } finally {
      await jwks.close()
    }
  })
})
