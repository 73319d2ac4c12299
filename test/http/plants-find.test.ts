import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { appForSuite, errorOf, postPlant } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

/** The plants every test of a store finds among, created in this order (which createdAt keeps). */
const PLANTS: ReadonlyArray<readonly [id: bigint, name: string, tag?: string]> = [
  [30n, 'Ölbaum', 'tree'],
  [10n, 'Boston Fern', 'fern'],
  [20n, 'fernleaf', 'outdoor'],
  [40n, 'ΣΊΓΜΑ', undefined],
  [50n, 'OLBAUM', 'tree'],
  [5n, '100% _cactus\\', 'cactus'],
  [60n, '100 cacti', 'cactus'],
  [-7n, 'Zebra plant', 'aroid'],
  [70n, 'aloe', 'succulent'],
  [15n, 'Maidenhair FERN', 'fern'],
  [MAX, 'Éclair fern', 'fern'],
  [MIN, 'ΟΔΥΣΣΕΥΣ', undefined],
  [80n, 'Boston Fern', 'fern'],
]
/** Changed after every plant was created, in this order: the last ones in the updatedAt order. */
const CHANGED: ReadonlyArray<readonly [id: bigint, tag: string]> = [
  [20n, 'fern'],
  [-7n, 'tree'],
]

interface Model {
  id: bigint
  name: string
  tag: string | undefined
  created: number
  updated: number
}

function model(): Model[] {
  const plants = PLANTS.map(([id, name, tag], i) => ({ id, name, tag, created: i, updated: i }))
  CHANGED.forEach(([id, tag], i) => {
    const plant = plants.find((p) => p.id === id) as Model
    plant.tag = tag
    plant.updated = PLANTS.length + i
  })
  return plants
}

/** Strings by Unicode code point, as both stores order names. */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number)
  const y = [...b].map((c) => c.codePointAt(0) as number)
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x.length - y.length
}

const byId = (a: Model, b: Model) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const ORDERS: Record<string, (a: Model, b: Model) => number> = {
  id: byId,
  name: (a, b) => byCodePoint(a.name, b.name) || byId(a, b),
  createdAt: (a, b) => a.created - b.created || byId(a, b),
  updatedAt: (a, b) => a.updated - b.updated || byId(a, b),
}

/** The ids of the model's plants the filter keeps, in the order `sort` names. */
function expected(sort: string, keep: (p: Model) => boolean = () => true): bigint[] {
  const descending = sort.startsWith('-')
  const compare = ORDERS[descending ? sort.slice(1) : sort] as (a: Model, b: Model) => number
  return model()
    .filter(keep)
    .sort((a, b) => (descending ? -compare(a, b) : compare(a, b)))
    .map((p) => p.id)
}

const idsOf = (res: LightMyRequestResponse) =>
  (JSON.parse(res.body.replace(/"id":(-?\d+)/g, '"id":"$1"')) as { id: string }[]).map((p) => BigInt(p.id))

const nextOf = (res: LightMyRequestResponse) => {
  const link = res.headers.link as string | undefined
  return link === undefined ? undefined : (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string)
}

const containsFolded = (text: string) => (p: Model) =>
  p.name.normalize('NFC').toLowerCase().replaceAll('ς', 'σ').includes(text)

describe.each(storeKinds)('finding plants on $name', (kind) => {
  const t = appForSuite(kind)
  const call = (url: string) =>
    t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.bearer}` } })
  const wait = () => new Promise((resolve) => setTimeout(resolve, 3))

  beforeAll(async () => {
    for (const [id, name, tag] of PLANTS) {
      const body = `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":"${tag}"`}}`
      const res = await postPlant(t.app, t.bearer, body)
      expect(res.statusCode).toBe(200)
      // The next plant is created at a later instant, even where the store keeps milliseconds.
      await wait()
    }
    for (const [id, tag] of CHANGED) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/plants/${id}`,
        headers: { authorization: `Bearer ${t.bearer}`, 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify({ tag }),
      })
      expect(res.statusCode).toBe(200)
      await wait()
    }
  })

  /** Every page of a listing, following each Link: the ids in order, the pages and their answers. */
  async function walk(first: string): Promise<{ ids: bigint[]; pages: LightMyRequestResponse[] }> {
    const ids: bigint[] = []
    const pages: LightMyRequestResponse[] = []
    let url: string | undefined = first
    while (url !== undefined) {
      const res = await call(url)
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
      pages.push(res)
      ids.push(...idsOf(res))
      url = nextOf(res)
      expect(pages.length).toBeLessThan(50)
    }
    return { ids, pages }
  }

  async function refused(query: string): Promise<string> {
    const res = await call(`/plants?${query}`)
    expect(res.statusCode, query).toBe(400)
    const body = errorOf(res)
    expect(body.error).toBe(errors.QUERY_INVALID.code)
    return body.message
  }

  describe('q', () => {
    it('finds plants whose name contains the text, in any case', async () => {
      expect(idsOf(await call('/plants?q=fern'))).toEqual(expected('id', containsFolded('fern')))
      expect(idsOf(await call('/plants?q=FeRn'))).toEqual(expected('id', containsFolded('fern')))
      expect(idsOf(await call('/plants?q=boston+fern'))).toEqual([10n, 80n])
      expect(idsOf(await call('/plants?q=nothing-like-it'))).toEqual([])
    })

    it('folds by Unicode rules beyond ASCII, keeping accents', async () => {
      const q = async (text: string) => idsOf(await call(`/plants?q=${encodeURIComponent(text)}`))
      expect(await q('ölb')).toEqual([30n])
      expect(await q('ÖLBAUM')).toEqual([30n])
      expect(await q('olb')).toEqual([50n])
      // Typed decomposed, found composed.
      expect(await q('o\u0308lb')).toEqual([30n])
      expect(await q('σίγμα')).toEqual([40n])
      // A final sigma is a sigma: ΟΔΥΣΣΕΥΣ lower-cases to …ευς and is found by …ευσ, and by …ευς.
      expect(await q('ευσ')).toEqual([MIN])
      expect(await q('ευς')).toEqual([MIN])
      expect(await q('éclair')).toEqual([MAX])
      expect(await q('eclair')).toEqual([])
    })

    it('takes %, _ and \\ as ordinary characters, never as wildcards', async () => {
      const q = async (text: string) => idsOf(await call(`/plants?q=${encodeURIComponent(text)}`))
      expect(await q('%')).toEqual([5n])
      expect(await q('0%')).toEqual([5n])
      expect(await q('_')).toEqual([5n])
      expect(await q('\\')).toEqual([5n])
      expect(await q('100')).toEqual([5n, 60n])
      expect(await q('1%0')).toEqual([])
    })

    it.each([
      ['q=', 'The query parameter q must be 1 to 200 characters long.'],
      [`q=${'é'.repeat(201)}`, 'The query parameter q must be 1 to 200 characters long.'],
      ['q=a%00b', 'The query parameter q must not contain control characters or lone surrogates.'],
      ['q=a&q=b', 'The query parameter q must be given at most once.'],
    ])('refuses %s naming q', async (query, message) => {
      expect(await refused(query)).toBe(message)
    })

    it('takes 200 characters, four-byte ones too', async () => {
      expect((await call(`/plants?q=${encodeURIComponent('\u{1F33F}'.repeat(200))}`)).body).toBe('[]')
    })
  })

  describe('tag', () => {
    it('keeps plants whose tag is any of those given, a single one as before', async () => {
      const tagged =
        (...tags: string[]) =>
        (p: Model) =>
          p.tag !== undefined && tags.includes(p.tag)
      expect(idsOf(await call('/plants?tag=cactus'))).toEqual([5n, 60n])
      expect(idsOf(await call('/plants?tag=fern&tag=tree'))).toEqual(expected('id', tagged('fern', 'tree')))
      expect(idsOf(await call('/plants?tag=tree&tag=fern&tag=tree'))).toEqual(
        expected('id', tagged('fern', 'tree')),
      )
      expect(idsOf(await call('/plants?tag=none&tag=cactus'))).toEqual([5n, 60n])
    })

    it('takes 20 tags and refuses 21', async () => {
      const tags = (n: number) => Array.from({ length: n }, (_, i) => `tag=t${i}`).join('&')
      expect((await call(`/plants?${tags(19)}&tag=cactus`)).body).toBe(
        (await call('/plants?tag=cactus')).body,
      )
      expect(await refused(tags(21))).toBe('The query parameter tag may be given at most 20 times.')
    })

    it.each([
      ['tag=fern&tag=', 'The query parameter tag must be 1 to 100 characters long.'],
      [`tag=fern&tag=${'t'.repeat(101)}`, 'The query parameter tag must be 1 to 100 characters long.'],
      [
        'tag=a%0Ab&tag=fern',
        'The query parameter tag must not contain control characters or lone surrogates.',
      ],
      ['tag=a%0Ab', 'The query parameter tag must not contain control characters or lone surrogates.'],
    ])('refuses %s naming tag', async (query, message) => {
      expect(await refused(query)).toBe(message)
    })
  })

  describe('sort', () => {
    it.each(['id', '-id', 'name', '-name', 'createdAt', '-createdAt', 'updatedAt', '-updatedAt'])(
      'orders by %s, ties by id in the same direction, page after page',
      async (sort) => {
        const whole = await call(`/plants?sort=${sort}`)
        expect(idsOf(whole)).toEqual(expected(sort))
        expect(whole.headers.link).toBeUndefined()
        const { ids, pages } = await walk(`/plants?sort=${sort}&limit=3`)
        expect(ids).toEqual(expected(sort))
        expect(pages).toHaveLength(Math.ceil(PLANTS.length / 3))
      },
    )

    it('compares names by code point: upper case before lower, accented letters after z', async () => {
      const names = JSON.parse((await call('/plants?sort=name')).body) as { name: string }[]
      expect(names.map((p) => p.name)).toEqual([...names.map((p) => p.name)].sort(byCodePoint))
      expect(names.map((p) => p.name).slice(0, 3)).toEqual(['100 cacti', '100% _cactus\\', 'Boston Fern'])
      expect(names.at(-1)?.name).toBe('ΣΊΓΜΑ')
    })

    it.each(['sort=', 'sort=ID', 'sort=--id', 'sort=+name', 'sort=price', 'sort=name,id'])(
      'refuses %s naming sort and the values it takes',
      async (query) => {
        expect(await refused(query)).toBe(
          'The query parameter sort must be one of id, -id, name, -name, createdAt, -createdAt, updatedAt, -updatedAt.',
        )
      },
    )

    it('refuses a repeated sort', async () => {
      expect(await refused('sort=id&sort=name')).toBe('The query parameter sort must be given at most once.')
    })
  })

  describe('count', () => {
    it('says in X-Total-Count how many plants the filters keep, on every page', async () => {
      const { pages } = await walk('/plants?count=true&limit=5')
      expect(pages.map((p) => p.headers['x-total-count'])).toEqual(['13', '13', '13'])
      const ferns = await call('/plants?tag=fern&q=fern&count=true&limit=1')
      expect(ferns.headers['x-total-count']).toBe(
        String(expected('id', (p) => p.tag === 'fern' && containsFolded('fern')(p)).length),
      )
      expect((await call('/plants?q=nothing-like-it&count=true')).headers['x-total-count']).toBe('0')
    })

    it('leaves the header out unless asked', async () => {
      expect((await call('/plants')).headers['x-total-count']).toBeUndefined()
      expect((await call('/plants?count=false')).headers['x-total-count']).toBeUndefined()
    })

    it.each([
      ['count=true&count=true', 'The query parameter count must be given at most once.'],
      ['count=true&count=false', 'The query parameter count must be given at most once.'],
      ['count=1', 'The query parameter count must be true or false.'],
      ['count=yes', 'The query parameter count must be true or false.'],
      ['count=TRUE', 'The query parameter count must be true or false.'],
      ['count=', 'The query parameter count must be true or false.'],
    ])('refuses %s naming count', async (query, message) => {
      expect(await refused(query)).toBe(message)
    })
  })

  describe('paging with cursor', () => {
    it('links the next page with the query it belongs to, and follows it through every plant once', async () => {
      const first = await call('/plants?tag=fern&tag=outdoor&q=FERN&sort=-name&count=true&limit=2')
      expect(first.headers.link).toMatch(
        /^<\/plants\?limit=2&q=FERN&tag=fern&tag=outdoor&sort=-name&count=true&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
      )
      const { ids, pages } = await walk('/plants?tag=fern&tag=outdoor&q=FERN&sort=-name&count=true&limit=2')
      const keep = (p: Model) => (p.tag === 'fern' || p.tag === 'outdoor') && containsFolded('fern')(p)
      expect(ids).toEqual(expected('-name', keep))
      expect(new Set(ids).size).toBe(ids.length)
      expect(pages.at(-1)?.headers.link).toBeUndefined()
      for (const page of pages) expect(page.headers['x-total-count']).toBe(String(ids.length))
    })

    it('leaves the default sort and an unasked count out of the link', async () => {
      expect(nextOf(await call('/plants?limit=1'))).toMatch(/^\/plants\?limit=1&cursor=[A-Za-z0-9_-]+$/)
      expect(nextOf(await call('/plants?limit=1&sort=id&count=false'))).toMatch(
        /^\/plants\?limit=1&cursor=[A-Za-z0-9_-]+$/,
      )
    })

    it('lets the page size change from page to page', async () => {
      const cursor = new URL(`http://x${nextOf(await call('/plants?sort=name&limit=2'))}`).searchParams.get(
        'cursor',
      )
      const rest = await call(`/plants?sort=name&limit=1000&cursor=${cursor}`)
      expect(idsOf(rest)).toEqual(expected('name').slice(2))
    })

    it('pages through both ends of int64 in either direction', async () => {
      expect((await walk('/plants?sort=-id&limit=1')).ids).toEqual(expected('-id'))
      expect((await walk('/plants?sort=id&limit=4')).ids).toEqual(expected('id'))
    })

    it('refuses a cursor of another sort or filter, naming cursor', async () => {
      const link = nextOf(await call('/plants?q=fern&tag=fern&sort=name&limit=1')) as string
      const cursor = new URL(`http://x${link}`).searchParams.get('cursor') as string
      // The tags in another order and repeated are the same filter.
      expect(
        (await call(`/plants?tag=fern&tag=fern&q=FERN&sort=name&limit=1&cursor=${cursor}`)).statusCode,
      ).toBe(200)
      for (const other of [
        'q=fern&tag=fern&sort=-name',
        'q=fern&tag=fern',
        'q=fern&tag=fern&sort=createdAt',
        'q=fer&tag=fern&sort=name',
        'tag=fern&sort=name',
        'q=fern&sort=name',
        'q=fern&tag=fern&tag=tree&sort=name',
      ]) {
        expect(await refused(`${other}&cursor=${cursor}`)).toBe(
          'The query parameter cursor belongs to another listing: send it with the sort, q and tag of the request whose `Link` header gave it.',
        )
      }
    })

    it('refuses a cursor that was altered or made up, naming cursor', async () => {
      const link = nextOf(await call('/plants?sort=updatedAt&limit=1')) as string
      const cursor = new URL(`http://x${link}`).searchParams.get('cursor') as string
      const flipped = cursor.slice(0, 20) + (cursor[20] === 'A' ? 'B' : 'A') + cursor.slice(21)
      const message =
        'The query parameter cursor must be a cursor given in the `Link` header of a previous page.'
      for (const bad of [
        flipped,
        cursor.slice(0, -2),
        `${cursor}AA`,
        'abc',
        'not+a+cursor',
        '%3D%3D',
        'x'.repeat(2001),
        '',
      ]) {
        expect(await refused(`sort=updatedAt&cursor=${bad}`)).toBe(message)
      }
      expect(await refused(`sort=updatedAt&cursor=${cursor}&cursor=${cursor}`)).toBe(
        'The query parameter cursor must be given at most once.',
      )
    })
  })

  describe('after', () => {
    it('keeps paging the id order as it did, the link now carrying a cursor', async () => {
      const res = await call('/plants?after=20&limit=2')
      expect(idsOf(res)).toEqual(
        expected('id')
          .filter((id) => id > 20n)
          .slice(0, 2),
      )
      const rest = await walk(nextOf(res) as string)
      expect([...idsOf(res), ...rest.ids]).toEqual(expected('id').filter((id) => id > 20n))
      expect(idsOf(await call('/plants?after=20&sort=id&tag=fern'))).toEqual(
        expected('id', (p) => p.id > 20n && p.tag === 'fern'),
      )
    })

    it('refuses after with another order', async () => {
      for (const sort of ['-id', 'name', '-updatedAt']) {
        expect(await refused(`after=1&sort=${sort}`)).toBe(
          'The query parameter after pages only the ascending id order (sort=id): page other orders with the cursor of the `Link` header.',
        )
      }
    })

    it('refuses after beside cursor', async () => {
      const cursor = new URL(`http://x${nextOf(await call('/plants?limit=1'))}`).searchParams.get('cursor')
      expect(await refused(`after=1&cursor=${cursor}`)).toBe(
        'The query parameters after and cursor cannot be given together: the cursor already says where the page starts.',
      )
    })
  })
})

describe.each(storeKinds)('a walk through pages on $name while plants change', (kind) => {
  const t = appForSuite(kind)
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: string) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${t.bearer}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/merge-patch+json' }),
      },
      ...(payload === undefined ? {} : { payload }),
    })

  it.each(['name', '-name', 'createdAt', '-updatedAt'])(
    'in %s order meets every plant that did not change exactly once',
    async (sort) => {
      const base = BigInt(['name', '-name', 'createdAt', '-updatedAt'].indexOf(sort)) * 1000n
      const tag = `walk${sort}`
      for (let i = 0n; i < 20n; i++) {
        const res = await postPlant(
          t.app,
          t.bearer,
          `{"id":${base + i},"name":"plant ${(i * 7n) % 20n}","tag":"${tag}"}`,
        )
        expect(res.statusCode).toBe(200)
      }
      const seen: bigint[] = []
      const changed = new Set<bigint>()
      let url: string | undefined = `/plants?tag=${encodeURIComponent(tag)}&sort=${sort}&limit=3`
      let step = 0n
      while (url !== undefined) {
        const res = await call('GET', url)
        expect(res.statusCode).toBe(200)
        seen.push(...idsOf(res))
        url = nextOf(res)
        // Meanwhile: a new plant at each end of the order, one deleted, one renamed.
        step++
        expect(
          (
            await postPlant(
              t.app,
              t.bearer,
              `{"id":${base + 100n + step},"name":"a new ${step}","tag":"${tag}"}`,
            )
          ).statusCode,
        ).toBe(200)
        expect(
          (
            await postPlant(
              t.app,
              t.bearer,
              `{"id":${base + 200n + step},"name":"z new ${step}","tag":"${tag}"}`,
            )
          ).statusCode,
        ).toBe(200)
        if (step > 5n) continue
        const victim = base + ((step * 3n) % 20n)
        if (!changed.has(victim)) {
          changed.add(victim)
          expect((await call('DELETE', `/plants/${victim}`)).statusCode).toBe(204)
        }
        const renamed = base + ((step * 3n + 1n) % 20n)
        if (!changed.has(renamed)) {
          changed.add(renamed)
          expect(
            (await call('PATCH', `/plants/${renamed}`, `{"name":"plant renamed ${step}"}`)).statusCode,
          ).toBe(200)
        }
      }
      // A plant that changed its place in the order may be met twice or not at all; no other may.
      for (let i = 0n; i < 20n; i++) {
        if (changed.has(base + i)) continue
        expect(
          seen.filter((id) => id === base + i),
          String(base + i),
        ).toHaveLength(1)
      }
      expect(changed.size).toBe(10)
    },
  )
})
