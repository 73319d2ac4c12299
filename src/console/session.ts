import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { operations } from '../client/schema.js'
import type { Api } from './api.js'

/** Kept for this tab only, never in a URL, a cookie or localStorage. */
const TOKEN_KEY = 'plantstore.token'

export const savedToken = (): string | null => sessionStorage.getItem(TOKEN_KEY)
export const saveToken = (token: string): void => sessionStorage.setItem(TOKEN_KEY, token)
export const forgetToken = (): void => sessionStorage.removeItem(TOKEN_KEY)

export type Caller = operations['getCaller']['responses'][200]['content']['application/json']

export type Scope =
  | 'plants:read'
  | 'plants:write'
  | 'webhooks:manage'
  | 'tokens:manage'
  | 'metrics:read'
  | 'events:read'

export interface Session {
  api: Api
  caller: Caller
  /** Whether the token holds the scope: a page offers only what it may do. */
  can: (scope: Scope) => boolean
  signOut: () => void
}

export const SessionContext = createContext<Session | null>(null)

/** The signed-in session; pages are only rendered inside one. */
export function useSession(): Session {
  const session = useContext(SessionContext)
  if (session === null) throw new Error('useSession outside a signed-in console')
  return session
}
