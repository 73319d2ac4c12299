import { useState } from 'preact/hooks'
import { must, type Schemas } from '../api.js'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, Field } from '../ui.js'

/** A JSON integer as written: it goes out as one, digit for digit, whatever its size. */
const JSON_INTEGER = /^-?(0|[1-9][0-9]*)$/

/**
 * The id as the person typed it: an integer goes as a bare JSON integer (a bigint), anything else as
 * the text it is, so that the service's own rules refuse it and its message says why.
 */
export function idFromText(text: string): bigint {
  const trimmed = text.trim()
  return (JSON_INTEGER.test(trimmed) ? BigInt(trimmed) : text) as bigint
}

export function CreatePlant({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession()
  const [id, setId] = useState('')
  const [name, setName] = useState('')
  const [tag, setTag] = useState('')
  const [error, setError] = useState<unknown>()
  const [created, setCreated] = useState<Schemas['StoredPlant']>()
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setCreated(undefined)
    try {
      const body: Schemas['NewPlant'] = { id: idFromText(id), name, ...(tag === '' ? {} : { tag }) }
      const { data } = await must(api.POST('/plants', { body }))
      setCreated(data)
      setId('')
      setName('')
      setTag('')
      onCreated()
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form class="card plant-create" aria-label="New plant" onSubmit={submit}>
      <div class="toolbar">
        <Field
          label="Id"
          hint="An integer, up to 19 digits"
          inputMode="numeric"
          autocomplete="off"
          value={id}
          onInput={(event) => setId(event.currentTarget.value)}
        />
        <Field label="Name" value={name} onInput={(event) => setName(event.currentTarget.value)} />
        <Field
          label="Tag"
          hint="Optional"
          value={tag}
          onInput={(event) => setTag(event.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          Create plant
        </button>
      </div>
      <ErrorNote error={error} />
      {created ? (
        <p role="status">
          Created <a href={href('plants', created.id)}>plant {String(created.id)}</a>.
        </p>
      ) : null}
    </form>
  )
}
