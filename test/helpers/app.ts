import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll } from 'vitest'
import { type AppOptions, buildApp } from '../../src/app.js'
import type { Store } from '../../src/store/types.js'
import type { Scope } from '../../src/tokens/scopes.js'
import { TokenService } from '../../src/tokens/service.js'
import { watchContract } from './contract.js'
import type { RawResponse } from './raw-http.js'
import { openFresh, type StoreKind } from './stores.js'

export interface TestApp {
  app: FastifyInstance
  store: Store
  tokens: TokenService
  url: string
  /** fetch for real HTTP calls to this app: each response is checked against the document too. */
  checkedFetch(request: Request): Promise<Response>
  /** Checks an answer read off a raw socket against the document, as checkedFetch does. */
  checkAnswer(method: string, url: string, response: RawResponse): void
  /** A fresh token with the given scopes (default: read and write plants). */
  token(scopes?: Scope[], expiresInMs?: number): Promise<string>
  close(): Promise<void>
}

export interface TestAppOptions {
  bodyLimit?: number
  maxHeaderSize?: number
  maxConnections?: number
  maxStreams?: number
  idempotencyTtlMs?: number
  lifecycle?: { draining: boolean }
  allowPrivateWebhookUrls?: boolean
  rateLimit?: AppOptions['rateLimit']
  unauthenticatedRateLimit?: AppOptions['unauthenticatedRateLimit']
  scrapeMetrics?: AppOptions['scrapeMetrics']
  timeouts?: AppOptions['timeouts']
  logger?: AppOptions['logger']
  /** The token service's clock (expiries, a roll's overlap); Date.now by default. */
  now?: () => number
  jwts?: AppOptions['jwts']
  consoleDir?: AppOptions['consoleDir']
}

export async function makeApp(kind: StoreKind, options: TestAppOptions = {}): Promise<TestApp> {
  const { store, url } = await openFresh(kind)
  const { now, ...appOptions } = options
  const tokens = new TokenService(store.tokens, now ? { now } : {})
  const app = await buildApp({ store, tokens, ...appOptions })
  await app.ready()
  const contract = watchContract(app)
  return {
    app,
    store,
    tokens,
    url,
    checkedFetch: contract.fetch,
    checkAnswer: contract.answer,
    token: async (scopes = ['plants:read', 'plants:write'], expiresInMs) =>
      (await tokens.create('test', scopes, expiresInMs)).token,
    close: async () => {
      contract.done()
      await app.close()
      await store.close()
    },
  }
}

/** A describe block's app and a token for it, shared by the block's tests. */
export interface SuiteApp extends TestApp {
  /** A token with the scopes the block asked for (default: read and write plants). */
  readonly bearer: string
}

/**
 * One app on a fresh store for every test of the describe block that calls it: built, with its
 * token, before the block's first test and closed after its last. Its fields are read inside tests.
 */
export function appForSuite(
  kind: StoreKind,
  options: TestAppOptions = {},
  scopes: Scope[] = ['plants:read', 'plants:write'],
): SuiteApp {
  let built: { t: TestApp; bearer: string } | undefined
  beforeAll(async () => {
    const t = await makeApp(kind, options)
    built = { t, bearer: await t.token(scopes) }
  })
  afterAll(() => built?.t.close())
  const current = () => {
    if (!built) throw new Error('the suite app is read before its describe block started')
    return built
  }
  return {
    get app() {
      return current().t.app
    },
    get store() {
      return current().t.store
    },
    get tokens() {
      return current().t.tokens
    },
    get url() {
      return current().t.url
    },
    get bearer() {
      return current().bearer
    },
    checkedFetch: (request) => current().t.checkedFetch(request),
    checkAnswer: (method, url, response) => current().t.checkAnswer(method, url, response),
    token: (scopes, expiresInMs) => current().t.token(scopes, expiresInMs),
    close: () => current().t.close(),
  }
}

/** Starts the app listening on a free port of 127.0.0.1, for raw sockets and fetch; the port. */
export async function listenLocally(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

/** POST /plants with a raw body string and a token. */
export function postPlant(
  app: FastifyInstance,
  token: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const options: InjectOptions = {
    method: 'POST',
    url: '/plants',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    payload: body,
  }
  return app.inject(options)
}

/** Asserts the body is exactly the Error shape and returns it. */
export function errorOf(response: { body: string; headers: Record<string, unknown> }): {
  error: number
  message: string
} {
  const body = JSON.parse(response.body) as Record<string, unknown>
  const keys = Object.keys(body).sort()
  if (
    keys.join(',') !== 'error,message' ||
    typeof body.error !== 'number' ||
    typeof body.message !== 'string'
  ) {
    throw new Error(`not the Error shape: ${response.body}`)
  }
  if (!String(response.headers['content-type']).startsWith('application/json')) {
    throw new Error(`error content-type is ${String(response.headers['content-type'])}`)
  }
  return body as { error: number; message: string }
}
