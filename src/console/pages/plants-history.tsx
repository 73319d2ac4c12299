import { useEffect, useState } from 'preact/hooks'
import { nextPageQuery } from '../../client/link.js'
import { must, type Schemas } from '../api.js'
import { useSession } from '../session.js'
import { ErrorNote, TableRegion, Time } from '../ui.js'

type Change = Schemas['Change']

const KINDS: Record<Change['type'], string> = {
  'plant.created': 'Created',
  'plant.updated': 'Changed',
  'plant.deleted': 'Deleted',
}

/** Who made a change: a token by its public id, a JWT by issuer and subject, or a command. */
function who(actor: Change['actor']): string {
  if (actor === null) return 'Not recorded'
  if ('tokenId' in actor) return `Token ${actor.tokenId}`
  if ('iss' in actor) return `${actor.sub} (JWT from ${actor.iss})`
  return `Command line: plantstore ${actor.cli}`
}

function PlantState({ plant }: { plant: Schemas['StoredPlant'] | null }) {
  if (plant === null) return <span>—</span>
  return (
    <span class="plant-state">
      <span>{plant.name}</span>
      <span class="hint">Tag: {plant.tag ?? 'none'}</span>
    </span>
  )
}

const PAGE = 20

/** A plant's changes, newest first, a page at a time ("Older changes" adds the next). */
export function PlantHistory({ id }: { id: bigint }) {
  const { api } = useSession()
  const [changes, setChanges] = useState<Change[]>()
  const [before, setBefore] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [loading, setLoading] = useState(false)

  const load = async (from?: string) => {
    setLoading(true)
    setError(undefined)
    try {
      const { data, response } = await must(
        api.GET('/plants/{id}/history', { params: { path: { id }, query: { limit: PAGE, before: from } } }),
      )
      setChanges((shown) => (from === undefined ? data.data : [...(shown ?? []), ...data.data]))
      setBefore(nextPageQuery(response)?.get('before') ?? undefined)
    } catch (cause) {
      setError(cause)
    } finally {
      setLoading(false)
    }
  }
  useEffect(() => {
    void load()
  }, [])

  return (
    <>
      <h2>History</h2>
      <ErrorNote error={error} />
      {changes?.length === 0 ? <p>No change of this plant is on record.</p> : null}
      {changes && changes.length > 0 ? (
        <div class="plant-history">
          <TableRegion label="History, newest first">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Change</th>
                <th scope="col">Who</th>
                <th scope="col">Plant</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((change) => (
                <tr key={change.cursor}>
                  <td>
                    <Time iso={change.time} />
                  </td>
                  <td>{KINDS[change.type]}</td>
                  <td>{who(change.actor)}</td>
                  <td class="id">{String((change.after ?? change.before)?.id ?? id)}</td>
                  <td>
                    <PlantState plant={change.before} />
                  </td>
                  <td>
                    <PlantState plant={change.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </TableRegion>
        </div>
      ) : null}
      {before !== undefined ? (
        <button type="button" disabled={loading} onClick={() => load(before)}>
          Older changes
        </button>
      ) : null}
    </>
  )
}
