import { useEffect, useRef, useState } from 'preact/hooks'
import { must, type Schemas } from '../api.js'
import { useSession } from '../session.js'
import { ErrorNote, Field } from '../ui.js'

type Token = Schemas['Token']

/**
 * Asks, in a modal dialog, how long the token's current secret keeps working, then rolls it. Escape or
 * "Cancel" backs out; the service's refusal (a scope the caller lacks, an overlap out of range) is
 * shown in the dialog.
 */
export function RollDialog({
  token,
  onRolled,
  onClose,
}: {
  token: Token
  onRolled: (rolled: Schemas['TokenWithSecret']) => void
  onClose: () => void
}) {
  const { api } = useSession()
  const dialog = useRef<HTMLDialogElement>(null)
  const [overlap, setOverlap] = useState('24h')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const trimmed = overlap.trim()
      const { data } = await must(
        api.POST('/tokens/{id}/roll', {
          params: { path: { id: token.id } },
          body: trimmed === '' ? {} : { overlap: trimmed },
        }),
      )
      dialog.current?.close()
      onRolled(data)
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  return (
    <dialog ref={dialog} aria-labelledby="roll-title" onClose={onClose}>
      <form onSubmit={submit}>
        <h2 id="roll-title">Roll “{token.name}”</h2>
        <p>
          The token gets a new secret, shown once. Its current secret keeps working for the overlap, so the
          programs that use it can be moved over.
        </p>
        <Field
          label="Overlap"
          hint="How long the current secret keeps working: from 0s (it stops at once, for a leaked secret) to 30d, e.g. 15m, 1h, 24h."
          value={overlap}
          onInput={(event) => setOverlap(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
        />
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            Roll token
          </button>
        </div>
      </form>
    </dialog>
  )
}
