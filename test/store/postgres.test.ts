import { setTimeout as sleep } from 'node:timers/promises'
import pg, { type PoolClient } from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { inSchema } from '../../bench/postgres.js'
import type { AppError } from '../../src/errors.js'
import type { Plant } from '../../src/plants/model.js'
import { changePlant, createPlant, deletePlant } from '../../src/plants/service.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { openPostgres, type PostgresStore } from '../../src/store/postgres/index.js'
import { loadMigrations, migrate } from '../../src/store/postgres/migrate.js'
import { OUTBOX_LOCK } from '../../src/store/postgres/outbox-lock.js'
import { REVOCATION_CHANNEL } from '../../src/store/postgres/revocation.js'
import { inTransaction } from '../../src/store/postgres/transaction.js'
import type { ListedPlant, ListQuery } from '../../src/store/types.js'
import { admin, waitingOnLock, whileLocked } from '../helpers/postgres.js'
import { createTaggedAndUntagged, postgresKind, postgresStores } from '../helpers/stores.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { subscriptionRecord } from '../helpers/webhooks.js'

describe.skipIf(!postgresKind)('PostgreSQL store', () => {
  const { open, fresh, another } = postgresStores()
  // For the tests that count the statements of one turn: the revocation watch's poll, a statement of
  // its own on the pool, would otherwise land among them whenever its second comes round.
  const UNPOLLED = { revocationPollMs: 3_600_000 }
  const proxies: TcpProxy[] = []
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()))
  })

  it('keeps ids in bigint columns and round-trips both ends of the int64 range', async () => {
    const { store } = await fresh()
    const types = await store.pool.query(
      "SELECT data_type FROM information_schema.columns WHERE table_name = 'plants' AND column_name = 'id'",
    )
    expect(types.rows[0]?.data_type).toBe('bigint')
    for (const id of [9223372036854775807n, -9223372036854775808n, 9007199254740993n]) {
      expect(await store.plants.create({ id, name: `n${id}` })).toBe('created')
      expect((await store.plants.get(id))?.id).toBe(id)
    }
  })

  it('keeps the ids and seqs of the events an older database holds when it drops their unique index', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const older = new pg.Client({ connectionString: url })
    await older.connect()
    try {
      await migrate(
        older,
        loadMigrations().filter((m) => m.version < 18),
      )
      await older.query(`INSERT INTO events (id, type, payload, created_at, fanned_out_at) VALUES
        ('msg_old1', 'plant.created', '{}', to_timestamp(1), to_timestamp(1)),
        ('msg_old2', 'plant.created', '{}', to_timestamp(2), to_timestamp(2)),
        ('msg_old3', 'plant.created', '{}', to_timestamp(3), to_timestamp(3))`)
      await older.query('DELETE FROM events WHERE seq = 3')
    } finally {
      await older.end()
    }
    const store = await another(url)
    expect(store.migrated).toEqual([
      '018_lean_outbox',
      '019_find_plants',
      '020_change_facts',
      '021_stream_ticket_key',
    ])
    await createPlant(store.plants, { id: 1n, name: 'a' })
    const events = await store.events.listSince(0, 10)
    expect(events.map((e) => e.seq)).toEqual([1, 2, 4])
    expect(events.slice(0, 2).map((e) => e.id)).toEqual(['msg_old1', 'msg_old2'])
    // A new event is stored without an id, known by its time and seq, as on SQLite.
    const created = events[2] as (typeof events)[number]
    const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')
    expect(created.id).toBe(`msg_${hex(created.occurredAt.getTime(), 12)}${hex(4, 14)}`)
    const indexes = await store.pool.query<{ indexname: string; indexdef: string }>(
      "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname",
    )
    expect(indexes.rows.map((r) => r.indexname)).toEqual([
      'events_awaiting_fan_out',
      'events_by_plant',
      'events_by_time',
      'events_pkey',
    ])
    expect(indexes.rows[2]?.indexdef).toMatch(/USING brin/)
  })

  it('group-commits concurrent creates, failing only the duplicates', async () => {
    const { store } = await fresh()
    await store.plants.create({ id: 5n, name: 'already' })
    const outcomes = await Promise.all([
      store.plants.create({ id: 1n, name: 'a', tag: 't' }),
      store.plants.create({ id: 2n, name: 'b' }),
      store.plants.create({ id: 1n, name: 'dup in batch' }),
      store.plants.create({ id: 5n, name: 'dup of stored' }),
      store.plants.create({ id: 3n, name: 'c' }),
    ])
    expect(outcomes).toEqual(['created', 'created', 'exists', 'exists', 'created'])
    expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'a', tag: 't' })
    expect(await store.plants.get(5n)).toEqual({ id: 5n, name: 'already' })
  })

  it('fails every request of a batch whose commit fails, and keeps none of its rows', async () => {
    const { store } = await fresh()
    // A deferred constraint trigger runs at COMMIT, so the failure comes from the commit itself.
    await store.pool.query(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER refuse_boom AFTER INSERT ON plants
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_boom();`)
    const results = await Promise.allSettled([
      store.plants.create({ id: 10n, name: 'fine' }),
      store.plants.create({ id: 11n, name: 'boom' }),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await store.plants.get(10n)).toBeUndefined()
    expect(await store.events.listSince(0, 10)).toEqual([])
    expect(await store.plants.create({ id: 10n, name: 'fine' })).toBe('created')
  })

  it('lets exactly one of two instances create the same id', async () => {
    const { url, store } = await fresh()
    const other = await another(url)
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).plants.create({ id: 77n, name: `n${i}` })),
    )
    expect(outcomes.filter((o) => o === 'created')).toHaveLength(1)
  })

  it('never deadlocks two instances creating the same ids in opposite orders', async () => {
    const { url, store } = await fresh()
    const other = await another(url)
    const record = (tokenId: string, id: bigint) => ({
      idempotency: {
        tokenId,
        key: `k${id}`,
        fingerprint: 'f',
        status: 200,
        body: '{}',
        expiresAt: new Date(Date.now() + 60_000),
      },
    })
    for (const round of [0n, 1n, 2n]) {
      const ids = Array.from({ length: 100 }, (_, i) => round * 1000n + BigInt(i))
      // Plain batches, batches that carry Idempotency-Key records, and an import, each against an
      // instance that takes the same rows the other way round.
      const down = [...ids].reverse()
      // A deadlock would reject a whole batch: every create and the import must settle.
      const [up, keyed, imported] = await Promise.all([
        Promise.all(ids.map((id) => store.plants.create({ id, name: 'up' }))),
        Promise.all(down.map((id) => other.plants.create({ id, name: 'down' }, record('t', id)))),
        other.plants.importBatch(down.map((id) => ({ plant: { id, name: 'imported' } }))),
      ])
      ids.forEach((_, i) => {
        const j = ids.length - 1 - i
        const made = [up[i], keyed[j], imported[j]].filter((o) => o === 'created')
        expect(made).toHaveLength(1)
      })
    }
    expect(await store.plants.list({ limit: 1000 })).toHaveLength(300)
  })

  it('purges expired Idempotency-Keys without waiting for one a create holds, so the two never deadlock', async () => {
    const { url, store } = await fresh()
    const past = new Date(Date.now() - 1000)
    for (const id of [1n, 2n, 3n]) {
      const idempotency = {
        tokenId: 't',
        key: `k${id}`,
        fingerprint: 'f',
        status: 200,
        body: '{}',
        expiresAt: past,
      }
      expect(await store.plants.create({ id, name: 'p' }, { idempotency })).toBe('created')
    }
    // Another session holds one expired key, as a batch taking it over does until it commits.
    await admin(url, async (client) => {
      await client.query('BEGIN')
      await client.query(`SELECT 1 FROM idempotency_keys WHERE key = 'k2' FOR UPDATE`)
      try {
        const purged = await Promise.race([
          store.idempotency.purgeExpired(new Date()),
          sleep(5000).then(() => 'waited'),
        ])
        expect(purged).toBe(2)
      } finally {
        await client.query('ROLLBACK')
      }
    })
    expect(await store.idempotency.purgeExpired(new Date())).toBe(1)
  })

  it('never deadlocks two instances whose batches take the same Idempotency-Keys in opposite orders', async () => {
    const { url, store } = await fresh()
    const other = await another(url)
    const record = (key: string) => ({
      idempotency: {
        tokenId: 't',
        key,
        fingerprint: 'f',
        status: 200,
        body: '{}',
        expiresAt: new Date(Date.now() + 60_000),
      },
    })
    // Each instance's plants are its own, so only the keys are shared: one instance takes them with
    // its plants' ascending ids in one order, the other in the opposite order.
    const keys = Array.from({ length: 150 }, (_, i) => `k${String(i).padStart(3, '0')}`)
    const [mine, theirs] = await Promise.all([
      Promise.all(keys.map((key, i) => store.plants.create({ id: BigInt(i), name: 'a' }, record(key)))),
      Promise.all(
        keys.map((key, i) => other.plants.create({ id: 1000n - BigInt(i), name: 'b' }, record(key))),
      ),
    ])
    keys.forEach((_, i) => {
      expect([mine[i], theirs[i]].sort()).toEqual(['created', 'key-taken'])
    })
    // The store runs a deadlocked transaction again, which hides the deadlock from its callers;
    // PostgreSQL counts it once the sessions that met it have ended.
    await Promise.all(open.splice(0).map((s) => s.close()))
    const deadlocks = await admin(url, (c) =>
      c.query<{ n: string }>(
        'SELECT deadlocks::text AS n FROM pg_stat_database WHERE datname = current_database()',
      ),
    )
    expect(deadlocks.rows[0]?.n).toBe('0')
  })

  it('runs a transaction PostgreSQL aborted as deadlocked again, and fails it after three tries', async () => {
    const { url, store } = await fresh()
    await store.pool.query(
      "INSERT INTO plants (id, name, name_folded, created_at, updated_at) VALUES (1, 'a', 'a', now(), now()), (2, 'b', 'b', now(), now())",
    )
    // Another session holds row 2; the transaction holds row 1 and waits for row 2 first, then the
    // other session waits for row 1. The transaction waited longer, so PostgreSQL aborts it (40P01).
    const crossing = async (client: PoolClient) => {
      await admin(url, async (other) => {
        await other.query('BEGIN')
        await other.query("UPDATE plants SET name = 'other' WHERE id = 2")
        await client.query("UPDATE plants SET name = 'mine' WHERE id = 1")
        const mine = client.query("UPDATE plants SET name = 'mine' WHERE id = 2")
        await sleep(100)
        const theirs = other.query("UPDATE plants SET name = 'other' WHERE id = 1").catch(() => {})
        try {
          await mine
        } finally {
          await theirs
          await other.query('ROLLBACK')
        }
      })
    }
    let attempts = 0
    const result = await inTransaction(store.pool, async (client) => {
      attempts++
      if (attempts === 1) await crossing(client)
      else await client.query("UPDATE plants SET name = 'mine' WHERE id IN (1, 2)")
      return attempts
    })
    expect(result).toBe(2)
    const names = await store.pool.query('SELECT name FROM plants ORDER BY id')
    expect(names.rows.map((r) => r.name)).toEqual(['mine', 'mine'])

    attempts = 0
    await expect(
      inTransaction(store.pool, async (client) => {
        attempts++
        await crossing(client)
      }),
    ).rejects.toMatchObject({ code: '40P01' })
    expect(attempts).toBe(3)
  }, 30_000)

  it('writes a plant.created event with the plant, none for a duplicate, in seq order', async () => {
    const { store } = await fresh()
    await createPlant(store.plants, { id: 9223372036854775807n, name: 'big', tag: 't' })
    await expect(createPlant(store.plants, { id: 9223372036854775807n, name: 'again' })).rejects.toThrow(
      /exists/,
    )
    await Promise.all([1n, 2n, 3n].map((id) => createPlant(store.plants, { id, name: 'n' })))
    const events = await store.events.listSince(0, 10)
    expect(events).toHaveLength(4)
    expect(events[0]?.payload).toContain('"data":{"id":9223372036854775807,"name":"big","tag":"t"}')
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b))
    expect(await store.events.listSince(events[1]?.seq ?? 0, 10)).toHaveLength(2)
  })

  it('fans a batch’s events out to webhook deliveries in its own transaction, and wakes the dispatcher only when one was queued', async () => {
    const { store } = await fresh()
    let wakes = 0
    store.events.watch(() => wakes++)
    await createPlant(store.plants, { id: 1n, name: 'before any subscription' })
    expect(wakes).toBe(0)
    await store.webhooks.insert(subscriptionRecord('wh_fanout00000000000000000', new Date()))
    // Two creates and a delete in one turn, one batch; the subscription takes plant.created only.
    await Promise.all([
      createPlant(store.plants, { id: 2n, name: 'two' }),
      createPlant(store.plants, { id: 3n, name: 'three' }),
      deletePlant(store.plants, 1n),
    ])
    expect(wakes).toBe(1)
    const deliveries = await store.pool.query<{ plant: string; same_xid: boolean; same_time: boolean }>(
      `SELECT (e.payload::json -> 'data' ->> 'id') AS plant, d.xmin = p.xmin AS same_xid,
         d.created_at = e.created_at AND d.next_attempt_at = e.created_at AS same_time
       FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
       JOIN plants p ON p.id = (e.payload::json -> 'data' ->> 'id')::bigint
       ORDER BY d.event_seq`,
    )
    // Each delivery committed with its plant, dated with its event.
    expect(deliveries.rows).toEqual([
      { plant: '2', same_xid: true, same_time: true },
      { plant: '3', same_xid: true, same_time: true },
    ])
    const waiting = await store.pool.query('SELECT 1 FROM events WHERE fanned_out_at IS NULL')
    expect(waiting.rowCount).toBe(0)
    expect(await store.webhooks.fanOut(100, new Date())).toBe(0)
  })

  it('creates a subscription under the outbox lock, after the last event committed before it', async () => {
    const { url, store } = await fresh()
    await createPlant(store.plants, { id: 1n, name: 'before' })
    let stored = false
    const inserted = await admin(url, async (holder) => {
      // Another session holds the outbox lock, as a batch does from its events to its commit.
      await holder.query('SELECT pg_advisory_lock($1, $2)', [...OUTBOX_LOCK])
      try {
        const insert = store.webhooks
          .insert(subscriptionRecord('wh_afterlock000000000000000', new Date()))
          .then(() => {
            stored = true
          })
        await waitingOnLock(url, 'SELECT pg_advisory_xact_lock%')
        expect(stored).toBe(false)
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [...OUTBOX_LOCK])
        return insert
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()')
      }
    })
    expect(inserted).toBeUndefined()
    expect(stored).toBe(true)
    const [event] = await store.events.listSince(0, 10)
    expect((await store.webhooks.find('wh_afterlock000000000000000'))?.id).toBe('wh_afterlock000000000000000')
    const after = await store.pool.query<{ after_seq: string }>(
      'SELECT after_seq::text AS after_seq FROM webhooks',
    )
    expect(after.rows).toEqual([{ after_seq: String(event?.seq) }])
  })

  it('skips a subscription deleted while a batch fans out, failing none of its creates', async () => {
    const { url, store } = await fresh()
    await store.webhooks.insert(subscriptionRecord('wh_deleted0000000000000000', new Date()))
    const created = await admin(url, async (deleter) => {
      await deleter.query('BEGIN')
      await deleter.query("DELETE FROM webhooks WHERE id = 'wh_deleted0000000000000000'")
      const create = createPlant(store.plants, { id: 5n, name: 'meanwhile' })
      // The batch's fan-out waits on the subscription's row until the delete ends.
      await waitingOnLock(url, 'WITH e AS%')
      await deleter.query('COMMIT')
      return create
    })
    expect(created.plant).toEqual({ id: 5n, name: 'meanwhile' })
    const deliveries = await store.pool.query('SELECT 1 FROM webhook_deliveries')
    expect(deliveries.rowCount).toBe(0)
    expect(await store.events.listSince(0, 10)).toHaveLength(1)
  })

  it('writes one batch of creates at a time: what arrives meanwhile waits and commits as the next one', async () => {
    const { url, store } = await fresh()
    const waitingOnOutbox = async () =>
      (
        await store.pool.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        )
      ).rowCount
    const created = await admin(url, async (holder) => {
      // Another session holds the outbox lock, so the first batch stops before its events.
      await holder.query('SELECT pg_advisory_lock($1, $2)', [...OUTBOX_LOCK])
      try {
        const first = createPlant(store.plants, { id: 1n, name: 'first' })
        await vi.waitFor(async () => expect(await waitingOnOutbox()).toBe(1), { timeout: 5000, interval: 20 })
        // Three more creates, each in a turn of its own while the first batch waits.
        const later: Array<ReturnType<typeof createPlant>> = []
        for (const id of [2n, 3n, 4n]) {
          later.push(createPlant(store.plants, { id, name: 'later' }))
          await sleep(50)
        }
        expect(await waitingOnOutbox()).toBe(1)
        await holder.query('SELECT pg_advisory_unlock($1, $2)', [...OUTBOX_LOCK])
        return Promise.all([first, ...later])
      } finally {
        await holder.query('SELECT pg_advisory_unlock_all()')
      }
    })
    expect(created.map((c) => c.plant.id)).toEqual([1n, 2n, 3n, 4n])
    // The three that waited were written by one transaction, after the first's.
    const writers = await store.pool.query<{ id: string; xid: string }>(
      'SELECT id::text AS id, xmin::text AS xid FROM plants ORDER BY id',
    )
    const [firstXid, ...laterXids] = writers.rows.map((row) => row.xid)
    expect(new Set(laterXids).size).toBe(1)
    expect(laterXids[0]).not.toBe(firstXid)
  })

  it('writes the creates, updates and deletes of one turn in one transaction, each change seeing those of its plant before it', async () => {
    const { store } = await fresh()
    for (const id of [1n, 2n, 3n]) await createPlant(store.plants, { id, name: `p${id}` })
    const [last] = (await store.events.listSince(0, 100)).slice(-1)
    const outcomes = await Promise.allSettled([
      changePlant(store.plants, 1n, { name: 'one' }),
      changePlant(store.plants, 2n, { name: 'two' }, { ifMatch: ['"stale"'] }),
      changePlant(store.plants, 99n, { name: 'none' }),
      createPlant(store.plants, { id: 10n, name: 'ten' }),
      changePlant(store.plants, 1n, { name: 'one again', tag: 't' }),
      deletePlant(store.plants, 3n),
    ])
    const codes = outcomes.map((outcome) =>
      outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as AppError).entry.code,
    )
    expect(codes).toEqual(['ok', 41201, 40402, 'ok', 'ok', 'ok'])
    const first = (outcomes[0] as PromiseFulfilledResult<{ etag: string }>).value
    const second = (outcomes[4] as PromiseFulfilledResult<{ plant: Plant; etag: string }>).value
    expect(second.plant).toEqual({ id: 1n, name: 'one again', tag: 't' })
    expect(second.etag).not.toBe(first.etag)
    const rows = await store.pool.query<{ id: string; xid: string; version: number }>(
      'SELECT id::text AS id, xmin::text AS xid, version FROM plants ORDER BY plants.id',
    )
    expect(rows.rows.map(({ id, version }) => ({ id, version }))).toEqual([
      { id: '1', version: 3 },
      { id: '2', version: 1 },
      { id: '10', version: 1 },
    ])
    // The creation of 10 and both changes of 1 committed together.
    expect(rows.rows[2]?.xid).toBe(rows.rows[0]?.xid)
    const events = await store.events.listSince(last?.seq ?? 0, 100)
    expect(events.map((event) => [event.type, JSON.parse(event.payload).data.id])).toEqual([
      ['plant.created', 10],
      ['plant.updated', 1],
      ['plant.updated', 1],
      ['plant.deleted', 3],
    ])
    expect(events[2]?.payload).toContain('"name":"one again"')
  })

  it('makes a batch of changes in the same statements whatever their number, each on what those before it left', async () => {
    const { store } = await fresh(UNPOLLED)
    for (let id = 1n; id <= 12n; id++) await createPlant(store.plants, { id, name: `p${id}` })
    const statements = vi.spyOn(pg.Client.prototype, 'query')
    const renamed = await Promise.all(
      [4n, 5n, 6n, 7n, 8n, 9n, 10n, 11n, 12n].map((id) => changePlant(store.plants, id, { name: `n${id}` })),
    )
    // BEGIN, the rows read and locked, one UPDATE, the outbox lock, the events, COMMIT.
    expect(statements).toHaveBeenCalledTimes(6)
    statements.mockRestore()
    expect(renamed.map(({ plant }) => plant.name)).toEqual([
      'n4',
      'n5',
      'n6',
      'n7',
      'n8',
      'n9',
      'n10',
      'n11',
      'n12',
    ])
    const outcomes = await Promise.allSettled([
      changePlant(store.plants, 1n, { name: 'x' }),
      deletePlant(store.plants, 1n),
      deletePlant(store.plants, 2n),
      changePlant(store.plants, 2n, { name: 'y' }),
      changePlant(store.plants, 3n, { name: 'p3' }),
      changePlant(store.plants, 3n, { tag: 'z' }),
    ])
    const codes = outcomes.map((outcome) =>
      outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as AppError).entry.code,
    )
    expect(codes).toEqual(['ok', 'ok', 'ok', 40402, 'ok', 'ok'])
    const [unchanged, tagged] = outcomes.slice(4) as Array<
      PromiseFulfilledResult<{ plant: Plant; etag: string }>
    >
    expect(unchanged?.value.plant).toEqual({ id: 3n, name: 'p3' })
    expect(tagged?.value.plant).toEqual({ id: 3n, name: 'p3', tag: 'z' })
    expect(await store.plants.read(1n)).toBeUndefined()
    expect(await store.plants.read(2n)).toBeUndefined()
    // The change that changed nothing kept the version; the tag made the next one.
    expect(await store.plants.read(3n)).toEqual({ plant: { id: 3n, name: 'p3', tag: 'z' }, version: 2 })
    const events = await store.events.listSince(0, 100)
    expect(events.slice(-4).map((event) => [event.type, JSON.parse(event.payload).data])).toEqual([
      ['plant.updated', { id: 1, name: 'x' }],
      ['plant.deleted', { id: 1, name: 'x' }],
      ['plant.deleted', { id: 2, name: 'p2' }],
      ['plant.updated', { id: 3, name: 'p3', tag: 'z' }],
    ])
  })

  it('makes the point reads of one turn in one query, each answered with its own plant', async () => {
    const { store } = await fresh(UNPOLLED)
    await createPlant(store.plants, { id: 1n, name: 'one', tag: 't' })
    await createPlant(store.plants, { id: 9223372036854775807n, name: 'max' })
    await store.plants.update(1n, { name: 'one again' })
    const queries = vi.spyOn(store.pool, 'query')
    const found = await Promise.all([1n, 9223372036854775807n, 2n, 1n].map((id) => store.plants.read(id)))
    expect(queries).toHaveBeenCalledTimes(1)
    queries.mockRestore()
    expect(found).toEqual([
      { plant: { id: 1n, name: 'one again', tag: 't' }, version: 2 },
      { plant: { id: 9223372036854775807n, name: 'max' }, version: 1 },
      undefined,
      { plant: { id: 1n, name: 'one again', tag: 't' }, version: 2 },
    ])
    // A read in a later turn sees what was written meanwhile.
    await store.plants.remove(9223372036854775807n)
    expect(await store.plants.read(9223372036854775807n)).toBeUndefined()
  })

  it('reads each page asked for in one turn once, however many asked for it, each as read alone', async () => {
    const { store } = await fresh(UNPOLLED)
    for (let id = 1n; id <= 30n; id++) {
      await createPlant(store.plants, { id, name: `p${id}`, ...(id % 3n === 0n ? { tag: 'third' } : {}) })
    }
    const asked: ListQuery[] = [
      { limit: 5 },
      { limit: 5 },
      { after: { id: 7n }, limit: 4 },
      { after: { id: 28n }, limit: 10 },
      { tags: ['third'], limit: 3 },
      { tags: ['third'], after: { id: 12n }, limit: 2 },
      { tags: ['none'], limit: 5 },
      { after: { id: 9223372036854775807n }, limit: 5 },
    ]
    const alone: ListedPlant[][] = []
    for (const query of asked) alone.push(await store.plants.list(query))
    const ids = (pages: ListedPlant[][]) => pages.map((page) => page.map(({ plant }) => Number(plant.id)))
    expect(ids(alone)).toEqual([
      [1, 2, 3, 4, 5],
      [1, 2, 3, 4, 5],
      [8, 9, 10, 11],
      [29, 30],
      [3, 6, 9],
      [15, 18],
      [],
      [],
    ])
    const queries = vi.spyOn(store.pool, 'query')
    const together = await Promise.all(asked.map((query) => store.plants.list(query)))
    // Seven pages reach the database (none follows the largest id), two of them the same.
    expect(queries).toHaveBeenCalledTimes(6)
    queries.mockRestore()
    expect(together).toEqual(alone)
    expect(together[4]?.[0]).toEqual({ plant: { id: 3n, name: 'p3', tag: 'third' } })
    // Each distinct page is read once: every asker of a page gets the very same array.
    expect(together[0]).toBe(together[1])
  })

  it('fails every page and point read of a turn whose query fails', async () => {
    const { url } = await fresh()
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    const store = await openPostgres({ url: proxy.route(url), timeoutMs: 1000 })
    open.push(store)
    await createPlant(store.plants, { id: 1n, name: 'one' })
    await proxy.down()
    const outcomes = await Promise.allSettled([
      store.plants.read(1n),
      store.plants.read(2n),
      store.plants.list({ limit: 5 }),
      store.plants.list({ tags: ['t'], limit: 5 }),
      store.plants.list({ text: 'one', limit: 5 }),
      store.plants.count({}),
    ])
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError)
    }
  })

  it('keeps only tagged plants in the tag index, which listing by tag walks, and moves an older database to it', async () => {
    const { url, store } = await fresh()
    await createTaggedAndUntagged(store.plants)
    /** The tag index's entries, as ANALYZE counts them (exactly, on a table this small). */
    const indexEntries = async (s: PostgresStore) => {
      await s.pool.query('ANALYZE plants')
      const counted = await s.pool.query<{ n: number }>(
        "SELECT reltuples::int AS n FROM pg_class WHERE relname = 'plants_tag_id'",
      )
      return counted.rows[0]?.n
    }
    expect(await indexEntries(store)).toBe(3)
    const client = await store.pool.connect()
    try {
      // The table is too small for the planner to prefer any index on its own.
      await client.query('SET enable_seqscan = off')
      const plan = await client.query(
        'EXPLAIN SELECT id, name, tag FROM plants WHERE tag = $1 AND id >= $2 ORDER BY id LIMIT $3',
        ['fern', 0, 10],
      )
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using plants_tag_id/)
    } finally {
      await client.query('RESET enable_seqscan')
      client.release()
    }
    expect(await store.plants.list({ tags: ['fern'], limit: 10 })).toEqual([
      { plant: { id: 3n, name: 'p3', tag: 'fern' } },
      { plant: { id: 5n, name: 'p5', tag: 'fern' } },
    ])

    // A database migrated before the index was partial has every plant in it until it is migrated.
    await admin(url, (c) =>
      c.query(
        'DROP INDEX plants_tag_id; CREATE INDEX plants_tag_id ON plants (tag, id); DELETE FROM schema_migrations WHERE version = 9',
      ),
    )
    expect(await indexEntries(store)).toBe(5)
    const upgraded = await another(url)
    expect(upgraded.migrated).toEqual(['009_tagged_plants_index'])
    expect(await indexEntries(upgraded)).toBe(3)
    expect(await upgraded.plants.list({ tags: ['aroid'], limit: 10 })).toEqual([
      { plant: { id: 2n, name: 'p2', tag: 'aroid' } },
    ])
  })

  it('numbers the subscriptions of an older database, whose deliveries keep their random ids', async () => {
    const { url, store } = await fresh()
    await store.webhooks.insert(subscriptionRecord('wh_a', new Date()))
    await store.webhooks.insert(subscriptionRecord('wh_b', new Date()))
    await createPlant(store.plants, { id: 1n, name: 'a' })

    // As migration 010 left it: no numbers, random delivery ids, the index by due time alone.
    await admin(url, (c) =>
      c.query(`ALTER TABLE webhooks DROP COLUMN number;
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
        UPDATE webhook_deliveries SET id = 'dlv_' || substr(md5(random()::text), 1, 24);
        DELETE FROM schema_migrations WHERE version = 12`),
    )
    const legacy = await store.pool.query<{ id: string }>(
      "SELECT id FROM webhook_deliveries WHERE webhook_id = 'wh_a'",
    )
    const upgraded = await another(url)
    expect(upgraded.migrated).toEqual(['012_delivery_ids_by_event'])
    const numbered = await upgraded.pool.query('SELECT id, number::int FROM webhooks ORDER BY number')
    expect(numbered.rows).toEqual([
      { id: 'wh_a', number: 1 },
      { id: 'wh_b', number: 2 },
    ])
    const due = await upgraded.pool.query(
      "SELECT 1 FROM pg_indexes WHERE indexname = 'webhook_deliveries_due'",
    )
    expect(due.rowCount).toBe(0)
    const legacyId = legacy.rows[0]?.id as string
    expect(await upgraded.webhooks.requeueDelivery('wh_a', legacyId, new Date())).toMatchObject({
      id: legacyId,
    })

    // The next subscription is numbered after them, and new deliveries are named by event and number.
    await upgraded.webhooks.insert(subscriptionRecord('wh_c', new Date()))
    await createPlant(upgraded.plants, { id: 2n, name: 'b' })
    const [latest] = await upgraded.webhooks.listDeliveries('wh_c', { limit: 1 })
    expect(latest?.id).toBe(`dlv_${(latest?.eventSeq ?? 0).toString(16).padStart(14, '0')}0000000003`)
  })

  it('migrates once when five instances start together on an empty database', async () => {
    const { url } = await fresh()
    await admin(url, (c) => c.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'))
    const stores = await Promise.all(Array.from({ length: 5 }, () => another(url)))
    const versions = await stores[0]?.pool.query<{ version: number }>('SELECT version FROM schema_migrations')
    const list = versions?.rows.map((r) => r.version) ?? []
    expect(list.length).toBeGreaterThan(0)
    expect(new Set(list).size).toBe(list.length)
    expect(await stores[4]?.plants.create({ id: 1n, name: 'works' })).toBe('created')
  })

  it('waits for migrations that take longer than the database timeout, its own or another instance’s', async () => {
    const { url } = await fresh()
    // Another instance migrating: it holds the migration lock for longer than one query may take.
    await admin(url, (c) => c.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public'))
    const holding = admin(url, (c) =>
      c.query(
        `SELECT pg_advisory_lock(${0x706c_616e}, 1), pg_sleep(2.5), pg_advisory_unlock(${0x706c_616e}, 1)`,
      ),
    )
    await sleep(300)
    open.push(await openPostgres({ url, timeoutMs: 1000 }))
    await holding
    // A migration statement of its own that runs long (here an index build waiting for a writer).
    await admin(url, (c) =>
      c.query('DROP INDEX webhook_deliveries_by_event; DELETE FROM schema_migrations WHERE version = 6'),
    )
    const migrated = whileLocked(url, 'webhook_deliveries', async () => {
      await sleep(2500)
    })
    open.push(await openPostgres({ url, timeoutMs: 1000 }))
    await migrated
    const index = await admin(url, (c) =>
      c.query("SELECT 1 FROM pg_indexes WHERE indexname = 'webhook_deliveries_by_event'"),
    )
    expect(index.rowCount).toBe(1)
  })

  it('opens without migrating, for a thread of a process that has, while another migration holds the lock', async () => {
    const { url, store } = await fresh()
    await admin(url, async (c) => {
      // Held, the lock would keep a migrating open waiting past the test's time.
      await c.query('SELECT pg_advisory_lock($1, $2)', [0x706c_616e, 1])
      const thread = await openPostgres({ url, migrate: false, watchRevocations: false })
      open.push(thread)
      expect(thread.migrated).toEqual([])
      expect(await thread.plants.create({ id: 7n, name: 'seen' })).toBe('created')
      expect((await store.plants.read(7n))?.plant.name).toBe('seen')
    })
  })

  it('moves every instance’s revocation epoch when one revokes (NOTIFY)', async () => {
    // A poll interval far past the test's wait proves the notification alone carries it.
    const { url, store } = await fresh({ revocationPollMs: 600_000 })
    const other = await another(url, { revocationPollMs: 600_000 })
    await store.tokens.insert({
      id: 'abc',
      name: 'n',
      secretHash: 'h',
      scopes: ['plants:read'],
      createdAt: new Date(),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      rateLimit: null,
    })
    // A roll moves it as a revocation does: the replaced secret may be cached on the other instance.
    const beforeRoll = other.tokens.revocationEpoch()
    const rolled = await store.tokens.roll(
      'abc',
      { secretHash: 'h2', previousSecretExpiresAt: null },
      new Date(),
    )
    expect(rolled).toMatchObject({ secretHash: 'h2', previousSecretHash: null })
    await vi.waitFor(() => expect(other.tokens.revocationEpoch()).not.toBe(beforeRoll), { timeout: 5000 })
    const before = other.tokens.revocationEpoch()
    expect(await store.tokens.revoke('abc', new Date())).toBe('revoked')
    expect(store.tokens.revocationEpoch()).not.toBe(before)
    await vi.waitFor(() => expect(other.tokens.revocationEpoch()).not.toBe(before), { timeout: 5000 })
    expect((await other.tokens.find('abc'))?.revokedAt).toBeInstanceOf(Date)
    expect(await store.tokens.revoke('nope', new Date())).toBe('not-found')
  })

  it('keeps apart the revocation epochs of stores in two schemas of one database', async () => {
    const { url } = await fresh()
    await admin(url, (c) => c.query('CREATE SCHEMA garden; CREATE SCHEMA nursery'))
    // A poll interval far past the test's wait: only the notifications carry the epochs.
    const poll = { revocationPollMs: 600_000 }
    const garden = await another(inSchema(url, 'garden'), poll)
    const nursery = await another(inSchema(url, 'nursery'), poll)
    const nurseryTwin = await another(inSchema(url, 'nursery'), poll)
    const token = (id: string) => ({
      id,
      name: id,
      secretHash: 'h',
      scopes: ['plants:read' as const],
      createdAt: new Date(),
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      rateLimit: null,
    })
    for (const id of ['a', 'b', 'c']) {
      await garden.tokens.insert(token(id))
      expect(await garden.tokens.revoke(id, new Date())).toBe('revoked')
    }
    await nursery.tokens.insert(token('n'))
    expect(await nurseryTwin.tokens.find('a')).toBeUndefined()
    // The garden's three revocations, heard on the shared channel, must not count as the nursery's:
    // its first revocation is then a smaller epoch than theirs, and went unseen.
    expect(await nursery.tokens.revoke('n', new Date())).toBe('revoked')
    expect(nursery.tokens.revocationEpoch()).toBe(1)
    await vi.waitFor(() => expect(nurseryTwin.tokens.revocationEpoch()).toBe(1), { timeout: 5000 })
    expect(garden.tokens.revocationEpoch()).toBe(3)
  })

  it('still sees a revocation without a notification, by polling', async () => {
    const { url } = await fresh()
    const other = await another(url, { revocationPollMs: 100 })
    const before = other.tokens.revocationEpoch()
    await admin(url, (c) => c.query("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'"))
    await vi.waitFor(() => expect(other.tokens.revocationEpoch()).toBe(before + 1), { timeout: 5000 })
  })

  it('reports an unreachable database as unavailable, and recovers when it returns', async () => {
    const { url } = await fresh()
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    const store = await openPostgres({ url: proxy.route(url), timeoutMs: 2000, revocationPollMs: 100 })
    open.push(store)
    expect(await store.plants.create({ id: 1n, name: 'before' })).toBe('created')
    await proxy.down()
    await expect(store.plants.get(1n)).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(store.plants.create({ id: 2n, name: 'during' })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    )
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(store.tokens.list()).rejects.toBeInstanceOf(StoreUnavailableError)
    await proxy.up()
    await vi.waitFor(() => store.ping(), { timeout: 5000 })
    expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'before' })
    expect(await store.plants.create({ id: 2n, name: 'after' })).toBe('created')
  })

  it('answers a ping while every pooled connection is busy past the timeout, but not once the database stops answering', async () => {
    const { url } = await fresh()
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    const store = await openPostgres({ url: proxy.route(url), poolSize: 1, timeoutMs: 1000 })
    open.push(store)
    // The one pooled connection stays taken, as through a burst of slow queries: a query waits in
    // the pool's queue past the timeout, while the database itself answers at once.
    const held = await store.pool.connect()
    try {
      await expect(store.plants.get(1n)).rejects.toBeInstanceOf(StoreUnavailableError)
      // Queued behind the pool it would fail as that read did, after the same timeout.
      await store.ping()

      proxy.stall()
      const stalledAt = performance.now()
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError)
      // One timeout (1 s), not one spent in the pool's queue and another on the link.
      expect(performance.now() - stalledAt).toBeLessThan(1800)
      await proxy.down()
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError)
      await proxy.up()
      await vi.waitFor(() => store.ping(), { timeout: 5000 })
    } finally {
      held.release()
    }
  })

  it('reopens a revocation listener that a stalled link left deaf, and hears notifications again', async () => {
    const { url } = await fresh()
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    const store = await openPostgres({ url: proxy.route(url), timeoutMs: 1000, revocationPollMs: 100 })
    open.push(store)
    // The link stalls and comes back; the listening connection open meanwhile stays dead without
    // ever being closed, as after a firewall dropped its state.
    proxy.stall()
    await sleep(300)
    proxy.heal()
    const healedAt = performance.now()
    // An epoch no poll can read (meta never holds it): only a notification can carry it.
    const notified = 1_000_000
    await vi.waitFor(
      async () => {
        await admin(url, (c) => c.query('SELECT pg_notify($1, $2)', [REVOCATION_CHANNEL, String(notified)]))
        expect(store.tokens.revocationEpoch()).toBe(notified)
      },
      { timeout: 6000, interval: 200 },
    )
    // Within a timeout for the dead connection's round trip, a poll to open the next, and a margin.
    expect(performance.now() - healedAt).toBeLessThan(3000)
  })

  it('frees the outbox for every instance when one loses its link in the middle of a transaction', async () => {
    const { url, store } = await fresh()
    // This plant's event takes a while to insert: long enough to cut the link while it runs.
    await store.pool.query(`
      CREATE FUNCTION slow_event() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN IF NEW.payload LIKE '%"name":"cut off"%' THEN PERFORM pg_sleep(0.5); END IF; RETURN NULL; END $$;
      CREATE TRIGGER slow_event AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION slow_event();`)
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    const cut = await openPostgres({ url: proxy.route(url), timeoutMs: 1000 })
    open.push(cut)
    try {
      const stalled = createPlant(cut.plants, { id: 1n, name: 'cut off' })
      await vi.waitFor(
        async () => {
          const sleeping = await store.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'",
          )
          expect(sleeping.rowCount).toBe(1)
        },
        { timeout: 5000, interval: 20 },
      )
      // The link stalls: the instance gives up, while its session, never told, stays in its
      // transaction holding the outbox lock every create takes.
      proxy.stall()
      await expect(stalled).rejects.toBeInstanceOf(StoreUnavailableError)
      // Another instance still creates, well within its own timeout (5 s).
      const startedAt = performance.now()
      expect((await createPlant(store.plants, { id: 2n, name: 'elsewhere' })).plant.id).toBe(2n)
      expect(performance.now() - startedAt).toBeLessThan(4000)
      expect(await store.plants.get(1n)).toBeUndefined()
    } finally {
      await proxy.down()
    }
  })

  it('fails to open an unreachable database with StoreUnavailableError', async () => {
    const { url } = await fresh()
    const proxy = await TcpProxy.start(url)
    proxies.push(proxy)
    await proxy.down()
    await expect(openPostgres({ url: proxy.route(url), timeoutMs: 1000 })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    )
  })

  it('refuses a file backup and names pg_dump instead', async () => {
    const { store } = await fresh()
    await expect(store.backup('/tmp/never-written.db')).rejects.toThrow(/pg_dump/)
    await store.maintenance.checkpoint()
  })
})
