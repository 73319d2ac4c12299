import { useState } from 'preact/hooks'
import { nextPageQuery } from '../../client/link.js'
import type { operations } from '../../client/schema.js'
import { must, type Schemas } from '../api.js'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, Field, NotAllowed, Page, StatusNote, TableRegion, useLoad } from '../ui.js'
import { CreatePlant } from './plants-create.js'
import { SelectField } from './plants-select.js'

export type PlantSort = NonNullable<NonNullable<operations['listPlants']['parameters']['query']>['sort']>

/** What the list shows: the search as submitted (the tags as typed, comma-separated). */
export interface PlantSearch {
  q: string
  tags: string
  sort: PlantSort
  limit: number
}

const SORTS: Array<[PlantSort, string]> = [
  ['id', 'Id, lowest first'],
  ['-id', 'Id, highest first'],
  ['name', 'Name, A to Z'],
  ['-name', 'Name, Z to A'],
  ['createdAt', 'Created, oldest first'],
  ['-createdAt', 'Created, newest first'],
  ['updatedAt', 'Changed, oldest first'],
  ['-updatedAt', 'Changed, newest first'],
]

const PAGE_SIZES = [10, 25, 50, 100]

/** The tags typed in one box, comma-separated: the service keeps plants with any of them. */
const tagList = (tags: string): string[] =>
  tags
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '')

interface PlantPage {
  plants: Array<Schemas['StoredPlant']>
  total: number | undefined
  next: string | undefined
}

export function PlantList({
  search,
  cursors,
  status,
  onSearch,
  onPage,
}: {
  search: PlantSearch
  /** The cursor of each page after the first, up to the one shown: "Previous page" drops the last. */
  cursors: string[]
  status: string | undefined
  onSearch: (search: PlantSearch) => void
  onPage: (cursors: string[]) => void
}) {
  const { api, can } = useSession()
  const [draft, setDraft] = useState(search)
  const cursor = cursors.at(-1)
  const page = useLoad<PlantPage>(
    async (signal) => {
      const tag = tagList(search.tags)
      const { data, response } = await must(
        api.GET('/plants', {
          params: {
            query: {
              q: search.q === '' ? undefined : search.q,
              tag: tag.length > 0 ? tag : undefined,
              sort: search.sort,
              count: true,
              limit: search.limit,
              cursor,
            },
          },
          signal,
        }),
      )
      const total = response.headers.get('x-total-count')
      return {
        plants: data,
        total: total === null ? undefined : Number(total),
        next: nextPageQuery(response)?.get('cursor') ?? undefined,
      }
    },
    [api, search, cursor],
  )
  const submit = (event: Event) => {
    event.preventDefault()
    onSearch({ ...draft })
  }
  const shown = page.data

  return (
    <Page title="Plants">
      <StatusNote text={status} />
      <search aria-label="Find plants">
        <form class="card plant-search" onSubmit={submit}>
          <div class="toolbar">
            <Field
              label="Search plants"
              hint="A piece of the name, in any case"
              type="search"
              value={draft.q}
              onInput={(event) => setDraft({ ...draft, q: event.currentTarget.value })}
            />
            <Field
              label="Tag"
              hint="Several, separated by commas: plants with any of them"
              value={draft.tags}
              onInput={(event) => setDraft({ ...draft, tags: event.currentTarget.value })}
            />
            <SelectField
              label="Sort"
              value={draft.sort}
              options={SORTS}
              onChange={(sort) => setDraft({ ...draft, sort: sort as PlantSort })}
            />
            <SelectField
              label="Per page"
              value={String(draft.limit)}
              options={PAGE_SIZES.map((size) => [String(size), String(size)])}
              onChange={(limit) => setDraft({ ...draft, limit: Number(limit) })}
            />
            <button type="submit" class="primary">
              Search
            </button>
          </div>
        </form>
      </search>

      <ErrorNote error={page.error} />
      <p class="plant-total" role="status" aria-busy={page.loading}>
        {shown?.total === undefined ? '' : `${shown.total} ${shown.total === 1 ? 'plant' : 'plants'}`}
      </p>
      {shown && shown.plants.length === 0 ? <p>No plant matches.</p> : null}
      {shown && shown.plants.length > 0 ? (
        <TableRegion label="Plants found">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Tag</th>
            </tr>
          </thead>
          <tbody>
            {shown.plants.map((plant) => (
              <tr key={String(plant.id)}>
                <td>
                  <a class="id" href={href('plants', plant.id)}>
                    {String(plant.id)}
                  </a>
                </td>
                <td>{plant.name}</td>
                <td>{plant.tag ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </TableRegion>
      ) : null}
      <nav class="pager" aria-label="Pages of plants">
        <button type="button" disabled={cursors.length === 0} onClick={() => onPage(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span>Page {cursors.length + 1}</span>
        <button
          type="button"
          disabled={shown?.next === undefined || page.loading}
          onClick={() => shown?.next && onPage([...cursors, shown.next])}
        >
          Next page
        </button>
      </nav>

      <h2>New plant</h2>
      {can('plants:write') ? (
        <CreatePlant onCreated={page.reload} />
      ) : (
        <NotAllowed scope="plants:write" what="create, change or delete plants" />
      )}
    </Page>
  )
}
