import pg from 'pg'
import { StoreUnavailableError } from '../errors.js'

export const REVOCATION_CHANNEL = 'plantstore_token_revoked'

/** The documented promise (docs/postgresql.md): every instance refuses a revoked token at most this long after the revocation. */
export const REVOCATION_BOUND_MS = 5000

/**
 * The SQL expression of a revocation's notification payload, given the new epoch as `$2`: the epoch and
 * the schema of the tables it counts (RevocationWatch.notified).
 */
export const REVOCATION_PAYLOAD = "$2::text || ' ' || coalesce(current_schema(), '')"

const EPOCH_QUERY = "SELECT value::text AS value FROM meta WHERE key = 'token_epoch'"

/** What a channel listened to besides the revocations' is told (RevocationWatch.listenTo). */
export interface ChannelListener {
  /** A notification on the channel from this store's schema. */
  notified(): void
  /** The connection has begun to listen on the channel: whatever was notified before went unseen. */
  listening(): void
}

export interface RevocationWatchOptions {
  /** Connection settings for the dedicated listening connection (never taken from the pool). */
  client: pg.ClientConfig
  pool: pg.Pool
  /** How often the epoch is re-read, as the fallback when a notification is missed. */
  pollIntervalMs: number
  /** How long the epoch may go unconfirmed before tokens are refused; only tests change it. */
  boundMs?: number
}

/**
 * Keeps the token revocation epoch in memory, so reading it on every request costs nothing.
 * Instances learn of a revocation two ways: a NOTIFY sent in the revoking transaction reaches every
 * instance that LISTENs within milliseconds of the commit; and the epoch is re-read every
 * `pollIntervalMs`, which bounds the delay when the listening connection was down or a notification
 * was lost. The listening connection is re-opened on the next poll after it breaks, or after it fails
 * to respond to a round trip: a link that stalled (a firewall or NAT that dropped its state) leaves it
 * open but deaf, with no error, until TCP keepalive gives up hours later.
 *
 * Each re-read goes two ways at once, and either response confirms the epoch: on the listening
 * connection, which no query of the pool can hold up, so slow queries or a burst of requests that
 * take every pooled connection do not leave it unconfirmed while the database is fine; and through
 * the pool, which keeps it confirmed while the listening connection is deaf, until its round trip
 * times out and it is opened again.
 *
 * While the database cannot be reached none of this works, and a token this process verified before
 * needs no database: one revoked meanwhile would be accepted for as long as the outage lasts. So once
 * no re-read has succeeded for the bound, on either connection, the epoch is not known, and reading it
 * fails as an unreachable database does; the next re-read that succeeds ends that.
 */
export class RevocationWatch {
  readonly channel = REVOCATION_CHANNEL
  private current = 0
  /**
   * The schema this store's tables are in (`current_schema()` under the URL's search path), read on
   * the first listening connection before it listens.
   */
  private schema: string | undefined
  /** When the last re-read that succeeded was sent (performance.now()); undefined until one has. */
  private confirmedAt: number | undefined
  private listener: pg.Client | undefined
  private connecting: Promise<void> | undefined
  private checking: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Other channels this connection listens on while someone wants them (listenTo). */
  private readonly channels = new Map<string, ChannelListener>()

  constructor(private readonly options: RevocationWatchOptions) {}

  /** Throws StoreUnavailableError when a revocation may have gone unseen for longer than the bound. */
  get epoch(): number {
    const boundMs = this.options.boundMs ?? REVOCATION_BOUND_MS
    if (this.confirmedAt !== undefined && performance.now() - this.confirmedAt > boundMs) {
      throw new StoreUnavailableError(
        `the token revocations could not be read for ${boundMs} ms: no token is accepted until they can`,
      )
    }
    return this.current
  }

  /** Takes a value seen elsewhere (a poll, a notification, this process's own revoke); never goes back. */
  observe(epoch: number): void {
    if (Number.isFinite(epoch) && epoch > this.current) this.current = epoch
  }

  /**
   * Listens on `channel` too, on the same connection, until the returned function is called; only
   * then, so that an instance nobody asks for the channel is not woken by every notification on it.
   * `listening` is called once the connection listens, and again whenever it is opened anew (a
   * notification sent while it was down is lost). Nothing is heard while the watch is not started.
   */
  listenTo(channel: string, listener: ChannelListener): () => void {
    this.channels.set(channel, listener)
    // A connection being opened listens on it once open (openListener).
    if (this.listener) this.listenOn(this.listener, channel, listener)
    return () => {
      if (this.channels.get(channel) !== listener) return
      this.channels.delete(channel)
      const current = this.listener
      current?.query(`UNLISTEN ${channel}`).catch(() => this.discard(current))
    }
  }

  /** Sent on the connection in the order asked, so an UNLISTEN and a LISTEN after it keep theirs. */
  private listenOn(client: pg.Client, channel: string, listener: ChannelListener): void {
    client.query(`LISTEN ${channel}`).then(
      () => {
        if (this.listener === client && this.channels.get(channel) === listener) listener.listening()
      },
      () => this.discard(client),
    )
  }

  /** False until started, and for good in a process that verifies no tokens. */
  get started(): boolean {
    return this.timer !== undefined
  }

  async start(): Promise<void> {
    // Opening the listening connection reads the epoch on it: the first confirmation takes no pooled
    // connection.
    await this.listen()
    // Closed while the connection was opening: nothing is left to poll for.
    if (this.closed) return
    this.timer = setInterval(() => void this.tick(), this.options.pollIntervalMs)
    this.timer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    await this.connecting?.catch(() => {})
    const listener = this.listener
    this.listener = undefined
    if (listener) await endWithin(listener, this.options.client.connectionTimeoutMillis ?? 0)
  }

  /**
   * One round trip on the listening connection, opened first if it is down, that re-reads the epoch;
   * a connection that fails it is closed, to be opened again. It is not one of the pool's, so it
   * responds while every pooled connection is taken, and it has the same timeouts: a database that
   * does not respond fails it within them. Calls made while one is on its way share it, so a dead
   * connection never has more than one query waiting on it.
   */
  check(): Promise<void> {
    this.checking ??= this.roundTrip().finally(() => {
      this.checking = undefined
    })
    return this.checking
  }

  private async roundTrip(): Promise<void> {
    if (!this.listener) await this.listen()
    const listener = this.listener
    if (!listener) throw new StoreUnavailableError('the revocation listener is closed')
    try {
      await this.readEpoch(listener)
    } catch (error) {
      this.discard(listener)
      throw error
    }
  }

  private async tick(): Promise<void> {
    // Side by side: the epoch stays confirmed through the pool while a deaf listener times out, and
    // on the listener while every pooled connection is taken.
    await Promise.all([this.check().catch(() => {}), this.poll().catch(() => {})])
  }

  private async poll(): Promise<void> {
    const sent = performance.now()
    const result = await this.options.pool.query<{ value: string }>(EPOCH_QUERY)
    this.confirm(result.rows[0]?.value, sent)
  }

  /**
   * LISTEN again, a no-op on a session that listens already, in the same round trip as the read:
   * the session then goes on showing what it is for in pg_stat_activity.
   */
  private async readEpoch(client: pg.Client): Promise<void> {
    const sent = performance.now()
    // Two statements in one simple query return one result each; the epoch is the last.
    const listens = [this.channel, ...this.channels.keys()].map((channel) => `LISTEN ${channel}; `).join('')
    const answer: unknown = await client.query(`${listens}${EPOCH_QUERY}`)
    const results = (Array.isArray(answer) ? answer : [answer]) as pg.QueryResult<{ value: string }>[]
    this.confirm(results.at(-1)?.rows[0]?.value, sent)
  }

  /** `sent` is taken before asking: the response holds every revocation committed by then, maybe no later one. */
  private confirm(value: string | undefined, sent: number): void {
    this.observe(Number(value ?? 0))
    // Reads overlap while the database is slow: an older one returning last confirms nothing newer.
    this.confirmedAt = Math.max(this.confirmedAt ?? sent, sent)
  }

  private listen(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.connecting ??= this.openListener().finally(() => {
      this.connecting = undefined
    })
    return this.connecting
  }

  private async openListener(): Promise<void> {
    const client = new pg.Client(this.options.client)
    const drop = () => this.discard(client)
    client.on('error', drop)
    client.on('end', drop)
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.notified(message.payload ?? '')
      else if (message.payload === this.schema) this.channels.get(message.channel)?.notified()
    })
    let heard = new Set<string>()
    try {
      await client.connect()
      if (this.schema === undefined) {
        const found = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema')
        this.schema = found.rows[0]?.schema ?? ''
      }
      // The epoch's re-read LISTENs on the channels wanted as it is sent.
      heard = new Set(this.channels.keys())
      await this.readEpoch(client)
    } catch (error) {
      drop()
      throw error
    }
    // Closed meanwhile, close() ends it: it waits for this opening, then ends the listener it left.
    this.listener = client
    // Channels wanted or given up while it was being opened.
    for (const [channel, listener] of [...this.channels]) {
      if (heard.has(channel)) listener.listening()
      else this.listenOn(client, channel, listener)
    }
    for (const channel of heard)
      if (!this.channels.has(channel)) client.query(`UNLISTEN ${channel}`).catch(drop)
  }

  /**
   * A notification's payload is `EPOCH SCHEMA` (REVOCATION_PAYLOAD). Stores in other schemas of the
   * same database share the channel, and their epochs count their own revocations: taken here, one
   * would raise this store's epoch past its own, and its next revocations, a smaller number, would go
   * unseen until the process restarted. A bare epoch comes from an older release, which named no schema.
   */
  private notified(payload: string): void {
    const space = payload.indexOf(' ')
    if (space === -1) this.observe(Number(payload))
    else if (payload.slice(space + 1) === this.schema) this.observe(Number(payload.slice(0, space)))
  }

  /** Closes a listening connection that broke or stopped responding, without waiting for a goodbye. */
  private discard(client: pg.Client): void {
    if (this.listener === client) this.listener = undefined
    client.end().catch(() => {})
    client.connection.stream.destroy()
  }
}

/**
 * Ends a connection, waiting at most `ms` for the server's goodbye. A connection left dead by a
 * stall (a link or firewall that drops its packets) never gets one, and a process stopping would
 * wait for it until its shutdown timeout: past `ms` its socket is dropped instead.
 */
async function endWithin(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
  })
  await Promise.race([client.end().catch(() => {}), late])
  clearTimeout(timer)
  client.connection.stream.destroy()
}
