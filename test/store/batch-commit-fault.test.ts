import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { type CatalogEntry, errors } from '../../src/errors.js'
import { parseDatabaseUrl } from '../../src/store/open.js'
import { errorOf, makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { admin } from '../helpers/postgres.js'
import { type StoreKind, storedPlantIds, storeKinds } from '../helpers/stores.js'

/** The id whose insert makes its batch's COMMIT fail. */
const FAULTY = 666n

/**
 * Makes every COMMIT that holds a plant with id FAULTY fail, the way a real database fails one: the
 * fault is raised at COMMIT, after every insert of the batch has succeeded.
 */
const faults: Record<StoreKind['name'], { arm(url: string): Promise<void>; answer: CatalogEntry }> = {
  sqlite: {
    // A deferred foreign key is checked only at COMMIT; SQLite then refuses the whole transaction.
    arm: async (url) => {
      const location = parseDatabaseUrl(url)
      if (location?.kind !== 'sqlite') throw new Error(`not a SQLite url: ${url}`)
      const db = new Database(location.path)
      try {
        db.exec(`
          CREATE TABLE fault_parent (id INTEGER PRIMARY KEY);
          CREATE TABLE fault_child (parent INTEGER REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED);
          CREATE TRIGGER fault AFTER INSERT ON plants WHEN NEW.id = ${FAULTY}
          BEGIN INSERT INTO fault_child (parent) VALUES (-1); END;`)
      } finally {
        db.close()
      }
    },
    answer: errors.INTERNAL,
  },
  postgres: {
    // A deferred constraint trigger runs at COMMIT; it fails as a server out of disk would (53100).
    arm: (url) =>
      admin(url, async (c) => {
        await c.query(`
          CREATE FUNCTION refuse_faulty() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            IF NEW.id = ${FAULTY} THEN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END IF;
            RETURN NULL;
          END $$;
          CREATE CONSTRAINT TRIGGER refuse_faulty AFTER INSERT ON plants
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_faulty();`)
      }),
    answer: errors.UNAVAILABLE,
  },
}

describe.each(storeKinds)('a batch of creates whose commit fails, on $name', (kind) => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('answers none of its requests 200, keeps none of its plants, and commits the next create', async () => {
    t = await makeApp(kind)
    const app = t.app
    const token = await t.token()
    const fault = faults[kind.name]
    await fault.arm(t.url)
    // The token is verified once beforehand, so that every create below reaches the store in the
    // same turn of the event loop and so joins one batch.
    expect((await postPlant(app, token, '{"id": 1, "name": "before"}')).statusCode).toBe(200)

    const ids = [10n, 11n, FAULTY, 12n, 13n]
    const answers = await Promise.all(
      ids.map((id) => postPlant(app, token, `{"id": ${id}, "name": "n${id}"}`)),
    )

    for (const answer of answers) {
      expect(answer.statusCode).toBe(fault.answer.status)
      expect(errorOf(answer).error).toBe(fault.answer.code)
      if (fault.answer === errors.UNAVAILABLE) expect(answer.headers['retry-after']).toBe('1')
    }
    for (const id of ids) {
      const read = await app.inject({ url: `/plants/${id}`, headers: { authorization: `Bearer ${token}` } })
      expect(read.statusCode).toBe(404)
    }
    expect([...(await storedPlantIds(t.url))]).toEqual(['1'])

    // The writer recovered: a create after the failed batch commits.
    const next = await postPlant(app, token, '{"id": 14, "name": "after"}')
    expect(next.statusCode).toBe(200)
    expect([...(await storedPlantIds(t.url))].sort()).toEqual(['1', '14'])
  })
})
