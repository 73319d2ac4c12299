import { useState } from 'preact/hooks'
import { must, type Schemas } from '../api.js'
import { useSession } from '../session.js'
import { ErrorNote, Field } from '../ui.js'

type NewToken = Schemas['NewToken']
type TokenScope = NewToken['scopes'][number]

/** What each scope lets a token do, in a person's words. */
const SCOPE_WORDS: Record<string, string> = {
  'plants:read': 'read plants and their history',
  'plants:write': 'create, edit and delete plants',
  'webhooks:manage': 'manage webhook subscriptions and deliveries',
  'tokens:manage': 'issue, roll and revoke tokens',
  'metrics:read': 'read the metrics',
  'events:read': 'follow the change feed',
}

/**
 * The form that issues a token. It offers only the scopes the signed-in token holds, since a token can
 * grant only what it holds; the service's refusal (a lifetime past the caller's own, a limit above it)
 * is shown as it words it.
 */
export function IssueForm({ onIssued }: { onIssued: (token: Schemas['TokenWithSecret']) => void }) {
  const { api, caller } = useSession()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<ReadonlySet<string>>(new Set())
  const [expiresIn, setExpiresIn] = useState('')
  const [rateLimit, setRateLimit] = useState('')
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  const toggle = (scope: string, on: boolean) => {
    const next = new Set(scopes)
    if (on) next.add(scope)
    else next.delete(scope)
    setScopes(next)
  }
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const body: NewToken = {
        name,
        // In the order the form lists them, so that the token reads as the form did.
        scopes: caller.scopes.filter((scope) => scopes.has(scope)) as TokenScope[],
      }
      if (expiresIn.trim() !== '') body.expiresIn = expiresIn.trim()
      if (rateLimit.trim() !== '') body.rateLimit = rateLimit.trim()
      const { data } = await must(api.POST('/tokens', { body }))
      setName('')
      setScopes(new Set())
      setExpiresIn('')
      setRateLimit('')
      onIssued(data)
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="card issue-token" onSubmit={submit} aria-labelledby="issue-title">
      <h2 id="issue-title">Issue a token</h2>
      <Field
        label="Name"
        hint="What the token is for, e.g. “ci reader”."
        value={name}
        onInput={(event) => setName(event.currentTarget.value)}
        autocomplete="off"
        required
        maxLength={100}
      />
      <fieldset class="scopes">
        <legend>Scopes</legend>
        <p class="hint">A token can grant only the scopes it holds: these are yours.</p>
        {caller.scopes.map((scope) => (
          <label key={scope} class="scope">
            <input
              type="checkbox"
              checked={scopes.has(scope)}
              onChange={(event) => toggle(scope, event.currentTarget.checked)}
            />{' '}
            <code>{scope}</code> <span class="hint">{SCOPE_WORDS[scope] ?? ''}</span>
          </label>
        ))}
      </fieldset>
      <div class="issue-limits">
        <Field
          label="Expires in"
          hint="Optional: e.g. 12h, 30d. Left empty, it expires when your token does (never, if yours never does)."
          value={expiresIn}
          onInput={(event) => setExpiresIn(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
        />
        <Field
          label="Rate limit"
          hint="Optional: requests per window, e.g. 600/1m. Left empty, your token's own limit, if it has one."
          value={rateLimit}
          onInput={(event) => setRateLimit(event.currentTarget.value)}
          autocomplete="off"
          spellcheck={false}
        />
      </div>
      <ErrorNote error={error} />
      <button type="submit" class="primary" disabled={busy}>
        Issue token
      </button>
    </form>
  )
}
