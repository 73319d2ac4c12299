import type { Database, Statement } from 'better-sqlite3'
import { AppendSignal } from '../append-signal.js'
import { CHANGE_TYPES, type ChangeRow, changeOfRow, pageOf, scanEnd } from '../change-row.js'
import type { ChangePage, ChangeQuery, ChangeRecord, EventStore, OutboxEvent } from '../types.js'
import { eventIdSql } from './fan-out.js'

interface EventRow {
  seq: number
  id: string
  type: string
  payload: string
  created_at: number
}

/** A change's row as stored, its time in epoch milliseconds. */
type StoredChange = Omit<ChangeRow, 'created_at'> & { created_at: number }

const CHANGE_COLUMNS = 'seq, type, created_at, payload, actor, request_id, before'

/** How often, while anyone watches, the store looks for events another process committed. */
export const OTHER_COMMITS_POLL_MS = 500

function changeOf(row: StoredChange): ChangeRecord {
  return changeOfRow({ ...row, created_at: new Date(row.created_at) })
}

export class SqliteEventStore extends AppendSignal implements EventStore {
  private readonly since: Statement
  private readonly plantChanges: Statement
  private readonly lastSeq: Statement
  private readonly horizon: Statement
  private readonly readPage: (feed: Statement | undefined, query: ChangeQuery) => ChangePage
  /** The feed's statement for each set of types asked (at most one per subset of CHANGE_TYPES). */
  private readonly feeds = new Map<string, Statement>()
  private readonly changeListeners = new Set<() => void>()
  private readonly dataVersion: Statement
  /** Looks for other processes' commits while anyone watches; see lookForOthers. */
  private poll: NodeJS.Timeout | undefined
  private seenVersion = 0
  private seenSeq = 0

  constructor(
    private readonly db: Database,
    /**
     * Settles once every batch committed so far is durable; undefined when each already is (see
     * BatchSink.durable). A change is never shown before it is on disk: a reader that kept its
     * cursor past one lost with the log would skip the change that later takes its seq.
     */
    private readonly durable: () => Promise<void> | undefined = () => undefined,
  ) {
    super()
    this.since = db.prepare(
      `SELECT e.seq, ${eventIdSql('e')} AS id, e.type, e.payload, e.created_at FROM events e
       WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
    )
    // A seq below the bound walks the index (plant_id, seq) backwards from it, a page at a time.
    this.plantChanges = db.prepare(
      `SELECT ${CHANGE_COLUMNS} FROM events WHERE plant_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    )
    // The last seq handed out: an event deleted since still counts, as the next one will be above it.
    this.lastSeq = db
      .prepare(
        `SELECT max(coalesce((SELECT max(seq) FROM events), 0),
                    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))`,
      )
      .pluck()
    this.horizon = db.prepare('SELECT seq FROM change_horizon').pluck()
    this.dataVersion = db.prepare('PRAGMA data_version').pluck()
    this.readPage = db.transaction((feed: Statement | undefined, query: ChangeQuery): ChangePage => {
      const rows = (
        feed ? feed.all(query.afterSeq, scanEnd(query.afterSeq), query.limit) : []
      ) as StoredChange[]
      return pageOf(rows.map(changeOf), query, this.lastSeq.get() as number)
    })
  }

  async listSince(
    afterSeq: number,
    limit: number,
  ): Promise<Array<OutboxEvent & { id: string; seq: number }>> {
    const rows = this.since.all(afterSeq, limit) as EventRow[]
    return rows.map((r) => ({
      seq: r.seq,
      id: r.id,
      type: r.type,
      payload: r.payload,
      occurredAt: new Date(r.created_at),
    }))
  }

  /**
   * One writer commits in seq order, so the feed is the events above `afterSeq` in seq order. The
   * page and the last seq are read in one read transaction: every seq up to that one was seen by it.
   */
  async changes(query: ChangeQuery): Promise<ChangePage> {
    return this.onceDurable(this.readPage(this.feed(query.types), query))
  }

  async history(plantId: bigint, limit: number, beforeSeq?: number): Promise<ChangeRecord[]> {
    const rows = this.plantChanges.all(plantId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as StoredChange[]
    return this.onceDurable(rows.map(changeOf))
  }

  async retentionHorizon(): Promise<number> {
    return (this.horizon.get() as number | undefined) ?? 0
  }

  /**
   * This process's commits ring at once (changed). Another process on the same file (`plantstore
   * import`, a second server) cannot tell this one, so while anyone watches the store looks for its
   * commits every OTHER_COMMITS_POLL_MS; nobody watching costs nothing.
   */
  watchChanges(listener: () => void): () => void {
    this.changeListeners.add(listener)
    if (this.poll === undefined && !this.db.memory && this.db.open) {
      this.seenVersion = this.dataVersion.get() as number
      this.seenSeq = this.lastSeq.get() as number
      this.poll = setInterval(() => this.lookForOthers(), OTHER_COMMITS_POLL_MS)
      this.poll.unref()
    }
    return () => {
      this.changeListeners.delete(listener)
      if (this.changeListeners.size === 0 && this.poll !== undefined) {
        clearInterval(this.poll)
        this.poll = undefined
      }
    }
  }

  /**
   * Rings when an event was committed since the last look by a connection other than this one:
   * data_version moves then (cheaply asked, no read of the table), and the last seq handed out
   * tells an event from other writes. This process's own writer is such a connection too, so its
   * changes may ring a second time: a wake-up only, after which readers find nothing new.
   */
  private lookForOthers(): void {
    if (!this.db.open) {
      // The store was closed under its watchers: nothing more will commit here.
      clearInterval(this.poll)
      this.poll = undefined
      return
    }
    try {
      const version = this.dataVersion.get() as number
      if (version === this.seenVersion) return
      const seq = this.lastSeq.get() as number
      this.seenVersion = version
      if (seq === this.seenSeq) return
      this.seenSeq = seq
    } catch {
      // Busy or closing: the next look asks again.
      return
    }
    this.changed()
  }

  /**
   * Called by the plant store after a commit that wrote plant changes, once it is durable. A listener
   * that throws is the listener's failure, not the write's: the others are still told, and the write
   * that rang settles as it would have.
   */
  changed(): void {
    for (const listener of this.changeListeners) {
      try {
        listener()
      } catch (error) {
        process.emitWarning(error as Error)
      }
    }
  }

  /**
   * The feed's statement for these types (every plant change type when absent); undefined when none
   * of them is a plant change type, so the feed holds nothing of them (a webhook's test message).
   */
  private feed(types: readonly string[] | undefined): Statement | undefined {
    const kept = types === undefined ? CHANGE_TYPES : CHANGE_TYPES.filter((type) => types.includes(type))
    if (kept.length === 0) return undefined
    const key = kept.join(' ')
    let statement = this.feeds.get(key)
    if (statement === undefined) {
      // The types are the fixed names of CHANGE_TYPES, never a caller's text.
      const names = kept.map((type) => `'${type}'`).join(', ')
      statement = this.db.prepare(
        `SELECT ${CHANGE_COLUMNS} FROM events WHERE seq > ? AND seq <= ? AND type IN (${names}) ORDER BY seq LIMIT ?`,
      )
      this.feeds.set(key, statement)
    }
    return statement
  }

  private onceDurable<T>(found: T): T | Promise<T> {
    const durable = this.durable()
    return durable === undefined ? found : durable.then(() => found)
  }
}
