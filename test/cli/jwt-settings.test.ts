import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveServeConfig } from '../../src/config.js'
import { runHere } from '../helpers/cli.js'
import {
  AUDIENCE,
  ISSUER,
  type JwksServer,
  type SigningKey,
  serveJwks,
  signingKey,
  signJwt,
} from '../helpers/jwks.js'
import { logEntries } from '../helpers/log.js'
import { issueToken, startServer } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

const JWKS = 'https://id.example.test/realms/plants/protocol/openid-connect/certs'
const serve = (...args: string[]) => ['serve', '--port', '0', '--database-url', 'sqlite::memory:', ...args]

describe('the JWT settings', () => {
  it('are listed by serve --help with their environment variables and defaults', async () => {
    const help = await runHere(['serve', '--help'])
    expect(help.code).toBe(0)
    for (const [flag, env] of [
      ['--jwt-jwks-url <url>', 'JWT_JWKS_URL'],
      ['--jwt-issuer <issuer>', 'JWT_ISSUER'],
      ['--jwt-audience <audience>', 'JWT_AUDIENCE'],
      ['--jwt-scope-claim <claim>', 'JWT_SCOPE_CLAIM'],
      ['--jwt-clock-tolerance <duration>', 'JWT_CLOCK_TOLERANCE'],
    ]) {
      expect(help.stdout).toContain(flag)
      expect(help.stdout).toContain(env)
    }
  })

  it('are off by default, and read from flags or the environment, the flag winning', () => {
    const none = resolveServeConfig({}, {})
    expect(none.jwtJwksUrl).toBeUndefined()
    expect(none.jwtScopeClaim).toBe('scope')
    expect(none.jwtClockToleranceMs).toBe(30_000)
    const env = {
      JWT_JWKS_URL: JWKS,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      JWT_SCOPE_CLAIM: 'permissions',
    }
    const config = resolveServeConfig({ jwtAudience: 'other', jwtClockTolerance: '0s' }, env)
    expect(config).toMatchObject({
      jwtJwksUrl: JWKS,
      jwtIssuer: ISSUER,
      jwtAudience: 'other',
      jwtScopeClaim: 'permissions',
      jwtClockToleranceMs: 0,
    })
  })

  it.each([
    [['--jwt-jwks-url', JWKS, '--jwt-audience', AUDIENCE], {}, '--jwt-issuer (JWT_ISSUER)'],
    [['--jwt-jwks-url', JWKS], { JWT_ISSUER: ISSUER }, '--jwt-audience (JWT_AUDIENCE)'],
    [[], { JWT_JWKS_URL: JWKS }, '--jwt-issuer (JWT_ISSUER)'],
  ])(
    'refuse a JWKS URL without issuer or audience with exit 2 and one line: %j %j',
    async (args, env, named) => {
      const res = await runHere(serve(...args), env)
      expect(res.code).toBe(2)
      expect(res.stdout).toBe('')
      expect(res.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(res.stderr).toContain(`--jwt-jwks-url (JWT_JWKS_URL) needs ${named}`)
    },
  )

  it.each([
    [['--jwt-issuer', ISSUER], '--jwt-issuer (JWT_ISSUER) has no effect without --jwt-jwks-url'],
    [['--jwt-audience', AUDIENCE], '--jwt-audience (JWT_AUDIENCE) has no effect without --jwt-jwks-url'],
    [['--jwt-jwks-url', 'ftp://id.example.test/jwks'], 'invalid --jwt-jwks-url (JWT_JWKS_URL)'],
    [['--jwt-jwks-url', 'id.example.test/jwks'], 'invalid --jwt-jwks-url (JWT_JWKS_URL)'],
    [
      ['--jwt-jwks-url', JWKS, '--jwt-issuer', ' ', '--jwt-audience', 'a'],
      'invalid --jwt-issuer (JWT_ISSUER)',
    ],
    [['--jwt-scope-claim', ''], 'invalid --jwt-scope-claim (JWT_SCOPE_CLAIM)'],
    [
      ['--jwt-clock-tolerance', '6m'],
      'invalid --jwt-clock-tolerance (JWT_CLOCK_TOLERANCE) "6m": expected a duration from 0s to 5m',
    ],
  ])('refuse %j with exit 2 and one line', async (args, message) => {
    const res = await runHere(serve(...args))
    expect(res.code).toBe(2)
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(res.stderr).toContain(message)
  })

  it('refuse a JWKS URL with credentials, without repeating them', async () => {
    const res = await runHere(serve('--jwt-jwks-url', 'https://svc:hunter2@id.example.test/jwks'))
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('expected an http or https URL without credentials')
    expect(res.stderr).not.toContain('hunter2')
  })
})

describe('serve --workers 2 with JWTs from an identity provider', () => {
  let jwks: JwksServer
  let key: SigningKey
  beforeAll(async () => {
    key = await signingKey('ES256', 'k1')
    jwks = await serveJwks([key])
  })
  afterAll(() => jwks?.close())

  it('accepts them in every worker beside opaque tokens, and never logs one, even at trace level', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const opaque = await issueToken(url, 'ops', 'plants:read')
    const server = await startServer(['--database-url', url, '--workers', '2', '--log-level', 'trace'], {
      JWT_JWKS_URL: jwks.url,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    })
    try {
      const token = await signJwt(key, { scope: 'plants:read' })
      // A new connection each time: the workers share the port, and each builds its own verifier.
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`${server.url}/plants?access_token=${token}`, {
          headers: { authorization: `Bearer ${token}`, connection: 'close' },
        })
        expect(res.status).toBe(200)
      }
      const refused = await fetch(`${server.url}/plants`, {
        headers: { authorization: `Bearer ${await signJwt(key, { aud: 'other' })}`, connection: 'close' },
      })
      expect(refused.status).toBe(401)
      const opaqueAnswer = await fetch(`${server.url}/plants`, {
        headers: { authorization: `Bearer ${opaque}` },
      })
      expect(opaqueAnswer.status).toBe(200)
      const output = server.output()
      // Each worker that answered a JWT fetched the set for itself, once.
      const workers = new Set(
        logEntries<{ msg: string; pid: number; status?: number; url?: string }>(output)
          .filter((line) => line.msg === 'request completed' && line.url?.startsWith('/plants?access_token='))
          .map((line) => line.pid),
      )
      expect(workers.size).toBeGreaterThanOrEqual(1)
      expect(jwks.fetches).toBe(workers.size)
      expect(output).toContain('request completed')
      expect(output).not.toContain(token.split('.')[2] as string)
      expect(output).not.toContain(token.slice(0, 60))
    } finally {
      await server.end()
    }
  })
})
