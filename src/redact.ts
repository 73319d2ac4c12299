// A line as it may be shown: in the log, on stderr, in a usage error. Apart from the logger, so that a
// command that only prints a message need not load the logger.
import { hideSecrets } from './tokens/format.js'

/**
 * A URL's query parameter, name and value. In a JSON log line a `"` or `\` of the URL is written
 * escaped (`\"`, `\\`), so an escape is taken whole: stopping at it would log the rest of the value.
 * A `#` does not end either: a client that sends one (browsers never do) gets it read as part of the
 * name or value, so `?password=a#b` is a password of `a#b`, all of which must go.
 */
const QUERY_PARAMETER = /([?&])((?:[^=&"\\\s]|\\.)*)=((?:[^&"\\\s]|\\.)*)/g

/**
 * A parameter named for a credential (`access_token`, RFC 6750 §2.3, and the like): a client that puts
 * a bearer token there may send one of another service, or one mangled out of this service's shape,
 * which TOKEN_IN_TEXT would not recognise; a password or other credential in a URL is a client's
 * mistake the log must not repeat. A stream ticket (`?ticket=`, docs/events.md) is a credential the
 * service itself asks for in the URL. The name is matched decoded, as the server reads it, so
 * `access%5Ftoken` is one too.
 */
const CREDENTIAL_NAME =
  /token|ticket|secret|api[_-]?key|passw(?:or)?d|pwd|credential|(?:^|[\W_])auth(?:orization)?(?:$|[\W_])/i
// A value already masked: a token cut to its public id, or a password the settings' messages hide.
const REDACTED_TOKEN = /^(?:pst_(?:[0-9a-f]{16}_)?\[redacted\]|\*\*\*)$/

function decoded(name: string): string {
  if (!name.includes('%')) return name
  try {
    return decodeURIComponent(name)
  } catch {
    return name
  }
}

export function redactTokens(line: string): string {
  return hideSecrets(line).replace(QUERY_PARAMETER, (whole, mark: string, name: string, value: string) =>
    CREDENTIAL_NAME.test(decoded(name)) && !REDACTED_TOKEN.test(value) ? `${mark}${name}=[redacted]` : whole,
  )
}
