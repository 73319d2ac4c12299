import { useEffect, useMemo, useState } from 'preact/hooks'
import { apiFor, must } from './api.js'
import { LivePage } from './pages/live.js'
import { PlantsPage } from './pages/plants.js'
import { TokensPage } from './pages/tokens.js'
import { WebhooksPage } from './pages/webhooks.js'
import { useRoute } from './route.js'
import {
  type Caller,
  forgetToken,
  type Scope,
  type Session,
  SessionContext,
  savedToken,
  saveToken,
} from './session.js'
import { SignIn } from './sign-in.js'
import { NotAllowed, Page } from './ui.js'

/** The console's sections: each needs one scope to be of use, and says so without it. */
const SECTIONS: Array<{
  path: string
  title: string
  scope: Scope
  what: string
  Show: () => preact.JSX.Element
}> = [
  { path: 'plants', title: 'Plants', scope: 'plants:read', what: 'read plants', Show: PlantsPage },
  { path: 'tokens', title: 'Tokens', scope: 'tokens:manage', what: 'manage tokens', Show: TokensPage },
  {
    path: 'webhooks',
    title: 'Webhooks',
    scope: 'webhooks:manage',
    what: 'manage webhooks',
    Show: WebhooksPage,
  },
  { path: 'live', title: 'Live', scope: 'events:read', what: 'follow the change feed', Show: LivePage },
]

interface Signed {
  token: string
  caller: Caller
}

export function App() {
  const [signed, setSigned] = useState<Signed>()
  const [checking, setChecking] = useState(savedToken() !== null)
  const [reason, setReason] = useState<string>()
  const route = useRoute()

  const signOut = (why?: string) => {
    forgetToken()
    setSigned(undefined)
    setReason(why)
  }
  const signIn = async (token: string) => {
    const caller = (await must(apiFor(token, () => {}).GET('/me'))).data
    saveToken(token)
    setReason(undefined)
    setSigned({ token, caller })
  }
  // A reload of the tab keeps its session: the token is checked again, as at sign-in.
  useEffect(() => {
    const token = savedToken()
    if (token === null) return
    signIn(token)
      .catch(() => signOut('Your token no longer works: sign in again.'))
      .finally(() => setChecking(false))
  }, [])

  const session = useMemo<Session | null>(() => {
    if (!signed) return null
    const scopes = new Set(signed.caller.scopes)
    return {
      api: apiFor(signed.token, () =>
        signOut('Your token no longer works (expired or revoked): sign in again.'),
      ),
      caller: signed.caller,
      can: (scope) => scopes.has(scope),
      signOut: () => signOut(),
    }
  }, [signed])

  if (checking && !session) return <main class="loading">Signing in…</main>
  if (!session) {
    return (
      <main>
        <SignIn onSignIn={signIn} reason={reason} />
      </main>
    )
  }
  const first = SECTIONS.find((section) => session.can(section.scope)) ?? SECTIONS[0]
  const section = SECTIONS.find((s) => s.path === route[0]) ?? first
  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Plant Store</span>
        <nav aria-label="Console">
          <ul>
            {SECTIONS.map((s) => (
              <li key={s.path}>
                <a href={`#/${s.path}`} aria-current={s === section ? 'page' : undefined}>
                  {s.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          Signed in as <strong>{session.caller.name}</strong>
        </span>
        <button type="button" onClick={session.signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        {section && session.can(section.scope) ? (
          <section.Show />
        ) : section ? (
          <Page title={section.title}>
            <NotAllowed scope={section.scope} what={section.what} />
          </Page>
        ) : null}
      </main>
    </SessionContext.Provider>
  )
}
