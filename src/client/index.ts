import createFetchClient, { type Client } from 'openapi-fetch'
import { PlantStoreError } from './error.js'
import { stringifyExactJson, withExactJson } from './json.js'
import { nextPageQuery } from './link.js'
import type { components, operations, paths } from './schema.js'

export { PlantStoreError } from './error.js'
export { parseExactJson, stringifyExactJson } from './json.js'
export type { components, operations, paths } from './schema.js'

export type NewPlant = components['schemas']['NewPlant']
export type Plant = components['schemas']['Plant']
export type PlantPatch = components['schemas']['PlantPatch']
export type StoredPlant = components['schemas']['StoredPlant']
export type ErrorBody = components['schemas']['Error']
export type Change = components['schemas']['Change']
export type ChangeType = Change['type']

/** A plant with the ETag of the version read, for a later If-Match. */
export interface TaggedPlant {
  plant: StoredPlant
  etag: string
  /** Never set: there so that `notModified` tells a conditional read's two responses apart. */
  notModified?: false
}

/** The response to a read with `ifNoneMatch` while the plant still has one of those ETags: 304, no plant. */
export interface NotModified {
  notModified: true
  /** The ETag the service named (one of those given), `''` when the response had none. */
  etag: string
}

/** The request never got a response: wrapped so callers catch one error type for every failure. */
function noResponse(request: Request, error: unknown): PlantStoreError {
  // A custom fetch may reject with anything, even undefined.
  const reason =
    (error as { cause?: { message?: unknown } } | undefined)?.cause?.message ??
    (error as Error | undefined)?.message
  return new PlantStoreError(
    0,
    undefined,
    `no answer from ${new URL(request.url).origin}: ${String(reason)}`,
    {
      cause: error,
    },
  )
}

/** An abort the caller asked for is theirs to see as it is, whatever reason they gave it. */
const isAbort = (request: Request, error: unknown) =>
  request.signal.aborted ||
  (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError'))

export interface ClientOptions {
  /** Where the service runs, e.g. http://127.0.0.1:8080 */
  baseUrl: string
  /** A bearer token from `plantstore token create`. */
  token: string
  fetch?: (input: Request) => Promise<Response>
  /**
   * How often a create (with the same Idempotency-Key) or a read is retried after a network error, a
   * 5xx or a 429. Replacements, patches and deletes are sent once: a repeat could meet the state the
   * first attempt made.
   */
  retries?: number
  /** Makes Idempotency-Keys; a random UUID by default. */
  newIdempotencyKey?: () => string
}

/** Options every method takes. */
export interface CallOptions {
  /** Ends the call, and a create's wait between attempts, at once: e.g. `AbortSignal.timeout(5000)`. */
  signal?: AbortSignal
}

/** The query of GET /plants, as the document describes it. */
export type ListQuery = NonNullable<operations['listPlants']['parameters']['query']>

/** A page of GET /plants. */
export interface PlantPage {
  plants: StoredPlant[]
  /** The next page's `cursor`; absent on the last page. */
  next?: string
  /** With `count: true`: how many plants the filters keep, on every page. */
  total?: number
}

/** A page of a plant's history, newest first. */
export interface HistoryPage {
  changes: Change[]
  /** The next (older) page's `before`; absent on the last page. */
  next?: string
}

/** A page of the change feed, in commit order. */
export interface ChangePage {
  changes: Change[]
  /** Where to read on from (`after`): there even when no change followed. */
  next: string
}

/** Where and how the change feed is read. */
export interface ChangesOptions extends CallOptions {
  /** Start after this cursor (a change's `cursor`, or a page's `next`); from the oldest change kept when absent. */
  after?: string
  /** Only changes of these types; every type when absent. */
  types?: ChangeType[]
  /** Changes per request, 1 to 1000; the service's default (100) when absent. */
  limit?: number
  /**
   * false: end once the feed has no more changes. true (the default): wait `pollIntervalMs` and ask
   * again, for ever, and wait out a failure that may pass (no response, 5xx, 429) the same way.
   */
  follow?: boolean
  /** How long to wait before asking again when no change followed; 1000 ms by default. */
  pollIntervalMs?: number
}

/**
 * Throws for a response that is not a success. Callers decide by `response.ok`, not by `error`: an
 * error response with an empty body (a proxy's bare 502) leaves openapi-fetch's `error` undefined.
 */
function fail(response: Response, error: unknown): never {
  const body = error as Partial<ErrorBody> | undefined
  throw new PlantStoreError(
    response.status,
    typeof body?.error === 'number' ? body.error : undefined,
    typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`,
    { headers: response.headers },
  )
}

/** A success whose body is not what the operation responds with: whoever responded, it was not the service. */
function unexpected(response: Response, what: string): PlantStoreError {
  return new PlantStoreError(response.status, undefined, `HTTP ${response.status} without ${what}`, {
    headers: response.headers,
  })
}

/**
 * Whatever responded with a success may not be the service (a captive proxy, another API at that address):
 * its body is checked first, so that a plant's name and tag are what the type says they are.
 */
function isPlant(value: unknown): value is StoredPlant {
  if (typeof value !== 'object' || value === null) return false
  const { id, name, tag } = value as Record<string, unknown>
  return typeof id === 'bigint' && typeof name === 'string' && (tag === undefined || typeof tag === 'string')
}

function tagged(response: Response, plant: StoredPlant | undefined): TaggedPlant {
  if (!isPlant(plant)) throw unexpected(response, 'a plant')
  return { plant, etag: response.headers.get('etag') ?? '' }
}

/**
 * An If-Match given is sent even when empty (the response it was read from had no ETag): the service
 * then refuses the change with 412, where leaving the header out would make it unconditionally.
 */
const ifMatchHeader = (ifMatch: string | undefined) => (ifMatch === undefined ? {} : { 'if-match': ifMatch })

/**
 * A random UUID (RFC 9562 version 4, as RFC 4122 defined it). Browsers give `randomUUID` to secure
 * contexts only (https, localhost) but `getRandomValues` everywhere, so a page served over plain http
 * still gets its Idempotency-Keys.
 */
function randomUuid(): string {
  const crypto = globalThis.crypto
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const PLANT_CHANGE_TYPES: ReadonlySet<string> = new Set(['plant.created', 'plant.updated', 'plant.deleted'])

const isPlantOrNull = (value: unknown) => value === null || isPlant(value)
const isTextOrNull = (value: unknown) => value === null || typeof value === 'string'

/** Whatever responded may not be the service: a change is checked as a plant is. */
function isChange(value: unknown): value is Change {
  if (typeof value !== 'object' || value === null) return false
  const { cursor, type, time, actor, requestId, before, after } = value as Record<string, unknown>
  return (
    typeof cursor === 'string' &&
    cursor !== '' &&
    typeof type === 'string' &&
    PLANT_CHANGE_TYPES.has(type) &&
    typeof time === 'string' &&
    (actor === null || (typeof actor === 'object' && !Array.isArray(actor))) &&
    isTextOrNull(requestId) &&
    isPlantOrNull(before) &&
    isPlantOrNull(after)
  )
}

/** The changes of a `{data: [...]}` body, each checked; undefined when the body is not that. */
function changesOf(body: unknown): Change[] | undefined {
  const data = (body as { data?: unknown } | undefined)?.data
  return Array.isArray(data) && data.every(isChange) ? data : undefined
}

/** A failure of a read that may pass: no response, a 5xx or a 429. */
const mayPass = (error: unknown) =>
  error instanceof PlantStoreError && (error.status === 0 || error.status >= 500 || error.status === 429)

/** The `before` of a history's `Link: <…>; rel="next"` header; undefined on the last page. */
function nextBefore(response: Response): string | undefined {
  const query = nextPageQuery(response)
  if (!query) return undefined
  const before = query.get('before')
  // A next page this client cannot ask for is no last page: stopping there would lose its changes.
  if (before === null || before === '')
    throw unexpected(response, `a cursor in its Link header: ${response.headers.get('link')}`)
  return before
}

/** The `cursor` of a `Link: <…>; rel="next"` header; undefined on the last page. */
function nextCursor(response: Response): string | undefined {
  const query = nextPageQuery(response)
  if (!query) return undefined
  const cursor = query.get('cursor')
  // A next page this client cannot ask for is no last page: stopping there would lose the plants on it.
  if (cursor === null || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw unexpected(response, `a cursor in its Link header: ${response.headers.get('link')}`)
  return cursor
}

/** The `X-Total-Count` of a listing asked with `count`; undefined when the response has none. */
function totalCount(response: Response): number | undefined {
  const header = response.headers.get('x-total-count')
  if (header === null) return undefined
  if (!/^(0|[1-9][0-9]{0,15})$/.test(header))
    throw unexpected(response, `a count in X-Total-Count: ${header}`)
  return Number(header)
}

/** The first request under the same key is still running: worth waiting for, not a response. */
const IDEMPOTENCY_IN_PROGRESS = 40902

/**
 * The longest wait between attempts, whatever a Retry-After asks or the backoff has grown to: a
 * caller is not held longer, and a doubling left unbounded would pass setTimeout's limit (24.8 days),
 * which fires at once, so many retries would end in attempts sent back to back.
 */
const MAX_RETRY_WAIT_MS = 10_000

/** The wait before attempt `attempt`: growing backoff, or longer when the response's Retry-After says so. */
function retryWait(attempt: number, retryAfter: string | null): number {
  const backoff = 50 * 2 ** attempt
  const value = retryAfter?.trim() ?? ''
  const asked = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now()
  return Math.min(Number.isNaN(asked) ? backoff : Math.max(backoff, asked), MAX_RETRY_WAIT_MS)
}

/** Waits, unless the caller aborts first: then it ends at once with the abort's reason. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const stop = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop)
      resolve()
    }, ms)
    signal?.addEventListener('abort', stop, { once: true })
  })
}

/**
 * A typed client for the Plant Store API. Ids are bigint both ways, exact over the whole int64
 * range; `api` is the underlying openapi-fetch client for anything the methods do not cover.
 */
export class PlantStoreClient {
  readonly api: Client<paths>
  private readonly retries: number
  private readonly newKey: () => string

  constructor(options: ClientOptions) {
    // Refused here, not by fetch at every call: fetch's refusal quotes the whole header value or URL,
    // secret included, into an error that ends up in a log. The service takes a token of visible
    // ASCII; the spaces and line ends around one read from a file are no part of it.
    const token =
      typeof options.token === 'string' ? options.token.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '') : ''
    if (!/^[\x21-\x7e]+$/.test(token))
      throw new TypeError('token must be visible ASCII characters, as `plantstore token create` prints it')
    if (/^[^:/?#]+:\/\/[^/?#]*@/.test(options.baseUrl))
      throw new TypeError('baseUrl must not carry credentials: the token is the only ones sent')
    const inner = options.fetch ?? ((request: Request) => globalThis.fetch(request))
    this.api = createFetchClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { authorization: `Bearer ${token}` },
      fetch: async (request) => {
        // Reading the body is covered too: a connection reset half-way is no response either.
        try {
          return await withExactJson(await inner(request))
        } catch (error) {
          throw isAbort(request, error) ? error : noResponse(request, error)
        }
      },
      bodySerializer: stringifyExactJson,
    })
    this.retries = options.retries ?? 2
    // No attempt count is ever >= NaN: a retries read from an unset setting would retry for ever.
    if (!Number.isSafeInteger(this.retries) || this.retries < 0)
      throw new RangeError(`retries must be a whole number from 0, not ${this.retries}`)
    this.newKey = options.newIdempotencyKey ?? randomUuid
  }

  /**
   * Sends `send` until a response is final, at most `retries` times more: no response at all, a 5xx, a
   * 429, or (for a create) a 409 "still running" is worth another try; anything else is returned.
   * Between attempts it waits as the response's Retry-After asks, up to MAX_RETRY_WAIT_MS. Only an
   * operation that a repeat cannot change more than the first attempt did is sent this way.
   */
  private async retrying<R extends { response: Response; error?: unknown }>(
    send: () => Promise<R>,
    signal: AbortSignal | undefined,
  ): Promise<R> {
    let wait = 0
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await pause(wait, signal)
      let result: R
      try {
        result = await send()
      } catch (error) {
        // Only no response is worth another try: an unreadable one would be read no better next time.
        const gotNoResponse = error instanceof PlantStoreError && error.status === 0
        if (attempt >= this.retries || !gotNoResponse) throw error
        wait = retryWait(attempt + 1, null)
        continue
      }
      const { error, response } = result
      const retryable =
        response.status >= 500 ||
        response.status === 429 ||
        (error as Partial<ErrorBody> | undefined)?.error === IDEMPOTENCY_IN_PROGRESS
      if (response.ok || attempt >= this.retries || !retryable) return result
      wait = retryWait(attempt + 1, response.headers.get('retry-after'))
    }
  }

  /**
   * Creates a plant. An Idempotency-Key goes with it (a new one unless given), so the retries after
   * a network error, a 5xx or a 429, or while the first attempt is still running (409), cannot
   * create twice.
   */
  async createPlant(
    plant: NewPlant,
    options: CallOptions & { idempotencyKey?: string } = {},
  ): Promise<TaggedPlant> {
    const key = options.idempotencyKey ?? this.newKey()
    const { signal } = options
    const { data, error, response } = await this.retrying(
      () => this.api.POST('/plants', { body: plant, headers: { 'idempotency-key': key }, signal }),
      signal,
    )
    if (!response.ok) fail(response, error)
    return tagged(response, data)
  }

  /**
   * Creates every plant or none (at most 1000), as createPlant does with its Idempotency-Key and
   * retries; the plants as created, in the order given.
   */
  async createPlants(
    plants: NewPlant[],
    options: CallOptions & { idempotencyKey?: string } = {},
  ): Promise<StoredPlant[]> {
    const key = options.idempotencyKey ?? this.newKey()
    const { signal } = options
    const { data, error, response } = await this.retrying(
      () => this.api.POST('/plants/batch', { body: { plants }, headers: { 'idempotency-key': key }, signal }),
      signal,
    )
    if (!response.ok) fail(response, error)
    const created = (data as { plants?: unknown } | undefined)?.plants
    if (!Array.isArray(created) || !created.every(isPlant)) throw unexpected(response, 'a list of plants')
    return created
  }

  /**
   * Deletes every plant named or none (at most 1000); with `allowMissing`, ids no plant has are passed
   * over. The ids deleted, exact. Sent once, as deletePlant is: a repeat could meet the state the
   * first attempt made.
   */
  async deletePlants(
    ids: bigint[],
    options: CallOptions & { allowMissing?: boolean } = {},
  ): Promise<bigint[]> {
    const { data, error, response } = await this.api.POST('/plants/batch-delete', {
      body: { ids, allowMissing: options.allowMissing ?? false },
      signal: options.signal,
    })
    if (!response.ok) fail(response, error)
    const deleted = (data as { deleted?: unknown } | undefined)?.deleted
    if (!Array.isArray(deleted) || !deleted.every((id) => typeof id === 'bigint'))
      throw unexpected(response, 'a list of deleted ids')
    return deleted
  }

  /**
   * One page, the cursor of the next page when there is one (pass it back as `cursor`, with the same
   * `q`, `tag` and `sort`), and with `count: true` the number of plants the filters keep.
   */
  async listPlants(query: ListQuery = {}, { signal }: CallOptions = {}): Promise<PlantPage> {
    const { data, error, response } = await this.retrying(
      () => this.api.GET('/plants', { params: { query }, signal }),
      signal,
    )
    if (!response.ok) fail(response, error)
    if (!Array.isArray(data) || !data.every(isPlant)) throw unexpected(response, 'a list of plants')
    const next = nextCursor(response)
    // A cursor leads past the page it came from: the one just sent again (a cache that ignores the
    // query responding with the same page) would keep allPlants walking the same pages for ever.
    if (next !== undefined && next === query.cursor)
      throw unexpected(response, `a next cursor other than the one sent in its Link header: ${next}`)
    const page: PlantPage = { plants: data }
    if (next !== undefined) page.next = next
    const total = totalCount(response)
    if (total !== undefined) page.total = total
    return page
  }

  /** Every plant the query keeps, in its order, page after page. */
  async *allPlants(
    query: Omit<ListQuery, 'after' | 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<StoredPlant> {
    let cursor: string | undefined
    do {
      const page = await this.listPlants(cursor === undefined ? query : { ...query, cursor }, options)
      yield* page.plants
      cursor = page.next
    } while (cursor !== undefined)
  }

  /**
   * One page of a plant's changes, newest first, and the `before` of the next (older) page when
   * there is one. A plant's history outlives it; an id with no change kept has none (no error).
   */
  async history(
    id: bigint,
    { signal, limit, before }: CallOptions & { limit?: number; before?: string } = {},
  ): Promise<HistoryPage> {
    const query = { ...(limit === undefined ? {} : { limit }), ...(before === undefined ? {} : { before }) }
    const { data, error, response } = await this.retrying(
      () => this.api.GET('/plants/{id}/history', { params: { path: { id }, query }, signal }),
      signal,
    )
    if (!response.ok) fail(response, error)
    const changes = changesOf(data)
    if (changes === undefined) throw unexpected(response, 'a list of changes')
    const next = nextBefore(response)
    if (next !== undefined && next === before)
      throw unexpected(response, `a next cursor other than the one sent in its Link header: ${next}`)
    return next === undefined ? { changes } : { changes, next }
  }

  /** One page of the change feed after `after` (from the oldest change kept when absent). */
  async changePage({
    signal,
    after,
    types,
    limit,
  }: Omit<ChangesOptions, 'follow' | 'pollIntervalMs'> = {}): Promise<ChangePage> {
    const query = {
      ...(after === undefined ? {} : { after }),
      ...(types === undefined ? {} : { type: types }),
      ...(limit === undefined ? {} : { limit }),
    }
    const { data, error, response } = await this.retrying(
      () => this.api.GET('/events', { params: { query }, signal }),
      signal,
    )
    if (!response.ok) fail(response, error)
    const changes = changesOf(data)
    const next = (data as { next?: unknown } | undefined)?.next
    if (changes === undefined || typeof next !== 'string' || next === '')
      throw unexpected(response, 'a page of changes with its next cursor')
    return { changes, next }
  }

  /**
   * Every change after `after`, in commit order, each once: it follows each page's `next`, and by
   * default goes on waiting for changes to come (see ChangesOptions.follow). It reads on from the
   * last change it yielded after a failure that may pass, so a change is neither skipped nor
   * repeated; to resume in a later run, keep the `cursor` of the last change handled and pass it as
   * `after`. The signal ends it at once, in a wait too, with the abort's reason.
   */
  async *changes(options: ChangesOptions = {}): AsyncGenerator<Change, void, undefined> {
    const { follow = true, pollIntervalMs = 1000, ...read } = options
    let after = read.after
    let failures = 0
    for (;;) {
      let page: ChangePage
      try {
        page = await this.changePage({ ...read, after })
        failures = 0
      } catch (error) {
        if (!follow || !mayPass(error)) throw error
        failures++
        const retryAfter = (error as PlantStoreError).headers.get('retry-after')
        await pause(retryWait(failures, retryAfter), read.signal)
        continue
      }
      const asked = after
      for (const change of page.changes) {
        yield change
        after = change.cursor
      }
      after = page.next
      // An empty page that moved on skipped events of other types: there may be more right after.
      if (page.changes.length > 0 || page.next !== asked) continue
      if (!follow) return
      await pause(pollIntervalMs, read.signal)
    }
  }

  /**
   * Reads a plant. With `ifNoneMatch` (the ETags of the versions the caller holds) the service leaves
   * out a plant that still has one of them: the result is then `{ notModified: true, etag }`, told
   * apart from a plant by `notModified`. Without it, a 304 is no response to this call and throws.
   * With `ifMatch` the plant is read only while it still has that ETag (a 412 `PlantStoreError`
   * otherwise), as a change with `ifMatch` is made.
   */
  getPlant(
    id: bigint,
    options?: CallOptions & { ifMatch?: string; ifNoneMatch?: undefined },
  ): Promise<TaggedPlant>
  getPlant(
    id: bigint,
    options: CallOptions & { ifMatch?: string; ifNoneMatch?: string },
  ): Promise<TaggedPlant | NotModified>
  async getPlant(
    id: bigint,
    { signal, ifMatch, ifNoneMatch }: CallOptions & { ifMatch?: string; ifNoneMatch?: string } = {},
  ): Promise<TaggedPlant | NotModified> {
    const header = {
      ...ifMatchHeader(ifMatch),
      ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }),
    }
    const { data, error, response } = await this.retrying(
      () => this.api.GET('/plants/{id}', { params: { path: { id }, header }, signal }),
      signal,
    )
    if (response.status === 304 && ifNoneMatch !== undefined)
      return { notModified: true, etag: response.headers.get('etag') ?? '' }
    if (!response.ok) fail(response, error)
    return tagged(response, data)
  }

  async replacePlant(
    id: bigint,
    plant: Plant,
    options: CallOptions & { ifMatch?: string } = {},
  ): Promise<TaggedPlant> {
    const { data, error, response } = await this.api.PUT('/plants/{id}', {
      params: { path: { id }, header: ifMatchHeader(options.ifMatch) },
      body: plant,
      signal: options.signal,
    })
    if (!response.ok) fail(response, error)
    return tagged(response, data)
  }

  async updatePlant(
    id: bigint,
    patch: PlantPatch,
    options: CallOptions & { ifMatch?: string } = {},
  ): Promise<TaggedPlant> {
    const { data, error, response } = await this.api.PATCH('/plants/{id}', {
      params: { path: { id }, header: ifMatchHeader(options.ifMatch) },
      body: patch,
      headers: { 'content-type': 'application/merge-patch+json' },
      signal: options.signal,
    })
    if (!response.ok) fail(response, error)
    return tagged(response, data)
  }

  async deletePlant(id: bigint, options: CallOptions & { ifMatch?: string } = {}): Promise<void> {
    const { error, response } = await this.api.DELETE('/plants/{id}', {
      params: { path: { id }, header: ifMatchHeader(options.ifMatch) },
      signal: options.signal,
    })
    if (!response.ok) fail(response, error)
    // The service responds 204 to a delete; any other success came from something else (a captive proxy).
    if (response.status !== 204) throw unexpected(response, 'the 204 of a delete')
  }
}

export function createClient(options: ClientOptions): PlantStoreClient {
  return new PlantStoreClient(options)
}
