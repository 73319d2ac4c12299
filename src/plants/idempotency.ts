import { createHash } from 'node:crypto'
import { AppError, errors } from '../errors.js'
import type { IdempotencyRecord, IdempotencyStore, PlantStore } from '../store/types.js'
import { currentTraceparent } from '../tracing/active.js'
import { batchItems, createdJson, itemExists, refuseRepeatedIds } from './batch.js'
import { type ChangeContext, plantEvent, plantJson } from './events.js'
import type { NewPlant } from './model.js'
import { plantExists } from './service.js'

/** The response to a create, as sent the first time and as replayed to a retry. */
export interface RecordedResponse {
  status: number
  body: string
  replayed: boolean
}

/**
 * "The same body" is the same parsed content: the validated plant (unknown fields dropped, key
 * order and spacing gone) in its one canonical JSON form, digested.
 */
export function fingerprintOf(plant: NewPlant): string {
  return createHash('sha256').update(plantJson(plant)).digest('base64url')
}

const PURGE_INTERVAL_MS = 60 * 60 * 1000

/**
 * Creates under an Idempotency-Key (IETF httpapi draft): the first response is stored in the plant's own
 * transaction and replayed to every retry with the same key and content within the retention time.
 */
export class IdempotentCreates {
  /** Keys whose first request is running in this process: a retry meanwhile gets 409. */
  private readonly running = new Set<string>()
  private lastPurge = 0

  constructor(
    private readonly plants: PlantStore,
    private readonly records: IdempotencyStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly onPurgeError: (error: unknown) => void = () => {},
  ) {}

  async create(plant: NewPlant, tokenId: string, key: string, by?: ChangeContext): Promise<RecordedResponse> {
    const body = plantJson(plant)
    const options = { by, json: body, traceparent: currentTraceparent() }
    return this.once(tokenId, key, fingerprintOf(plant), body, async (record) => {
      const outcome = await this.plants.create(plant, {
        event: (at) => plantEvent('plant.created', plant, at, options),
        idempotency: record,
      })
      return outcome === 'created' ? undefined : outcome === 'exists' ? plantExists(plant.id) : outcome
    })
  }

  /**
   * A batch create under a key. Its fingerprint digests the response body, which holds the validated
   * plants in order and never equals a single plant's text, so a key of POST /plants reused here (or
   * the reverse) is 422.
   */
  async createMany(
    plants: readonly NewPlant[],
    tokenId: string,
    key: string,
    by?: ChangeContext,
  ): Promise<RecordedResponse> {
    refuseRepeatedIds(plants.map((plant) => plant.id))
    const body = createdJson(plants)
    const fingerprint = createHash('sha256').update(body).digest('base64url')
    return this.once(tokenId, key, fingerprint, body, async (record) => {
      const outcome = await this.plants.createMany(batchItems(plants, by), record)
      return outcome === 'key-taken' ? outcome : itemExists(plants, outcome)
    })
  }

  /**
   * Replays the recorded response to (tokenId, key), or runs `write` with the record to store beside
   * what it writes. `write` resolves undefined once written, 'key-taken' when an unexpired record held
   * the key, or the refusal to throw when nothing was written for a reason of its own.
   */
  private async once(
    tokenId: string,
    key: string,
    fingerprint: string,
    body: string,
    write: (record: IdempotencyRecord) => Promise<AppError | 'key-taken' | undefined>,
  ): Promise<RecordedResponse> {
    const now = this.now()
    this.purgeNowAndThen(now)
    // Claimed before the first await, so a retry that arrives while the first request is running in
    // this process gets 409 however long the database takes to respond to the lookup.
    const slot = `${tokenId}\n${key}`
    if (this.running.has(slot)) throw new AppError(errors.IDEMPOTENCY_IN_PROGRESS)
    this.running.add(slot)
    try {
      const earlier = await this.records.find(tokenId, key, new Date(now))
      if (earlier) return replay(earlier, fingerprint)
      const record: IdempotencyRecord = {
        tokenId,
        key,
        fingerprint,
        status: 200,
        body,
        expiresAt: new Date(now + this.ttlMs),
      }
      const refusal = await write(record)
      if (refusal === undefined) return { status: record.status, body: record.body, replayed: false }
      // Another instance may have run the same key meanwhile (several instances share PostgreSQL):
      // if its record is committed, this is a retry of it.
      const winner = await this.records.find(tokenId, key, new Date(now))
      if (winner) return replay(winner, fingerprint)
      if (refusal !== 'key-taken') throw refusal
      throw new AppError(errors.IDEMPOTENCY_IN_PROGRESS)
    } finally {
      this.running.delete(slot)
    }
  }

  /** Expired records are dropped at most once an hour, outside the request that noticed. */
  private purgeNowAndThen(now: number): void {
    if (now - this.lastPurge < PURGE_INTERVAL_MS) return
    this.lastPurge = now
    setImmediate(() => {
      this.records.purgeExpired(new Date(now)).catch(this.onPurgeError)
    })
  }
}

function replay(record: IdempotencyRecord, fingerprint: string): RecordedResponse {
  if (record.fingerprint !== fingerprint) throw new AppError(errors.IDEMPOTENCY_KEY_REUSED)
  return { status: record.status, body: record.body, replayed: true }
}
