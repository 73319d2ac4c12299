import { useState } from 'preact/hooks'
import { ApiError } from './api.js'
import { Field, Page } from './ui.js'

/** The first page: a token pasted in, checked with GET /me before it is kept. */
export function SignIn({
  onSignIn,
  reason,
}: {
  onSignIn: (token: string) => Promise<void>
  reason?: string
}) {
  const [token, setToken] = useState('')
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await onSignIn(token.trim())
    } catch (cause) {
      setError(cause instanceof ApiError ? cause.message : String(cause))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Page title="Sign in">
      {reason ? <p class="status">{reason}</p> : null}
      <form class="sign-in" onSubmit={submit}>
        <Field
          label="Token"
          hint="A pst_… token or a JWT. It is kept in this tab only, until you sign out or close it."
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
          required
        />
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </Page>
  )
}
