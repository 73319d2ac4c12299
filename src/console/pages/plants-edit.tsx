import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, must, type Schemas } from '../api.js'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, Field, StatusNote } from '../ui.js'
import { PlantFields } from './plants-fields.js'

/** A plant as read, with the ETag of that version: a change is sent only on top of it. */
export interface PlantVersion {
  plant: Schemas['StoredPlant']
  etag: string
}

/** A change refused because the plant changed meanwhile: theirs (null once deleted) and ours. */
interface Conflict {
  theirs: PlantVersion | null
  yours: { name: string; tag: string }
}

/**
 * Name and tag, saved with `If-Match` on the version shown: when someone changed the plant meanwhile
 * the service refuses (412), and both versions are shown rather than theirs overwritten.
 */
export function PlantEdit({
  current,
  onSaved,
  onTheirs,
}: {
  current: PlantVersion
  onSaved: (version: PlantVersion) => void
  onTheirs: (version: PlantVersion) => void
}) {
  const { api } = useSession()
  const [name, setName] = useState(current.plant.name)
  const [tag, setTag] = useState(current.plant.tag ?? '')
  const [error, setError] = useState<unknown>()
  const [status, setStatus] = useState<string>()
  const [conflict, setConflict] = useState<Conflict>()
  const [busy, setBusy] = useState(false)
  const conflictHeading = useRef<HTMLHeadingElement>(null)
  // Another version shown (saved, or theirs taken) is the one the form edits from now on.
  useEffect(() => {
    setName(current.plant.name)
    setTag(current.plant.tag ?? '')
  }, [current.etag])
  useEffect(() => {
    if (conflict) conflictHeading.current?.focus()
  }, [conflict])

  const read = async (): Promise<PlantVersion | null> => {
    try {
      const { data, response } = await must(
        api.GET('/plants/{id}', { params: { path: { id: current.plant.id } } }),
      )
      return { plant: data, etag: response.headers.get('etag') ?? '' }
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 404) return null
      throw cause
    }
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setStatus(undefined)
    try {
      const { data, response } = await must(
        api.PUT('/plants/{id}', {
          params: { path: { id: current.plant.id }, header: { 'if-match': current.etag } },
          body: { name, ...(tag === '' ? {} : { tag }) },
        }),
      )
      onSaved({ plant: data, etag: response.headers.get('etag') ?? '' })
      setStatus('Saved.')
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 412) {
        try {
          setConflict({ theirs: await read(), yours: { name, tag } })
        } catch (reading) {
          setError(reading)
        }
      } else setError(cause)
    } finally {
      setBusy(false)
    }
  }

  if (conflict) {
    const { theirs, yours } = conflict
    return (
      <section class="card conflict" aria-labelledby="plant-conflict">
        <h3 id="plant-conflict" tabIndex={-1} ref={conflictHeading}>
          Changed by someone else
        </h3>
        <p role="alert">
          {theirs
            ? 'This plant was changed after you opened it, so your change was not saved. Here are both versions.'
            : 'This plant was deleted after you opened it, so your change was not saved.'}
        </p>
        <div class="versions">
          <div>
            <h4>Theirs, saved now</h4>
            {theirs ? <PlantFields plant={theirs.plant} /> : <p>Deleted.</p>}
          </div>
          <div>
            <h4>Yours, not saved</h4>
            <dl class="plant-fields">
              <dt>Name</dt>
              <dd>{yours.name}</dd>
              <dt>Tag</dt>
              <dd>{yours.tag === '' ? 'none' : yours.tag}</dd>
            </dl>
          </div>
        </div>
        {theirs ? (
          <button
            type="button"
            class="primary"
            onClick={() => {
              setConflict(undefined)
              onTheirs(theirs)
            }}
          >
            Take theirs and edit again
          </button>
        ) : (
          <a href={href('plants')}>Back to all plants</a>
        )}
      </section>
    )
  }

  return (
    <form class="card plant-edit" aria-label="Edit plant" onSubmit={save}>
      <Field label="Name" value={name} onInput={(event) => setName(event.currentTarget.value)} />
      <Field
        label="Tag"
        hint="Empty: the plant has no tag"
        value={tag}
        onInput={(event) => setTag(event.currentTarget.value)}
      />
      <ErrorNote error={error} />
      <StatusNote text={status} />
      <button type="submit" class="primary" disabled={busy}>
        Save
      </button>
    </form>
  )
}
