import createClient, { type Client } from 'openapi-fetch'
import { stringifyExactJson, withExactJson } from '../client/json.js'
import type { components, paths } from '../client/schema.js'

export type Schemas = components['schemas']
export type Api = Client<paths>

/** A request the service refused, or that got no response: what the page shows a person. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when no response came. */
    readonly status: number,
    /** The Error shape's code, when the response had one. */
    readonly code: number | undefined,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The API as the signed-in person: every request carries their token, ids are read and written digit
 * for digit (bigints), and a 401 (the token expired or was revoked meanwhile) signs them out.
 */
export function apiFor(token: string, onUnauthorized: () => void): Api {
  return createClient<paths>({
    baseUrl: location.origin,
    headers: { authorization: `Bearer ${token}` },
    bodySerializer: stringifyExactJson,
    fetch: async (request) => {
      let response: Response
      try {
        response = await fetch(request)
      } catch (cause) {
        throw new ApiError(0, undefined, `The service did not respond: ${(cause as Error).message}`)
      }
      if (response.status === 401) onUnauthorized()
      return withExactJson(response)
    },
  })
}

interface Outcome<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The data of a successful call, with its response (for headers); a refusal as an ApiError. */
export async function must<T>(call: Promise<Outcome<T>>): Promise<{ data: T; response: Response }> {
  let outcome: Outcome<T>
  try {
    outcome = await call
  } catch (cause) {
    if (cause instanceof ApiError) throw cause
    throw new ApiError(0, undefined, (cause as Error).message)
  }
  const { data, error, response } = outcome
  if (!response.ok) {
    const body = error as { error?: unknown; message?: unknown } | undefined
    const message = typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`
    throw new ApiError(response.status, typeof body?.error === 'number' ? body.error : undefined, message)
  }
  return { data: data as T, response }
}
