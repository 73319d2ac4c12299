import { redactTokens } from '../redact.js'

/**
 * Says why a command failed on stderr, as `plantstore: <reason>`. Reasons quote what was given
 * (`invalid --port "…"`, `getaddrinfo ENOTFOUND <host>`); a token given by mistake is cut to its
 * public id, as in the log.
 */
export function reportOnStderr(reason: string): void {
  process.stderr.write(redactTokens(`plantstore: ${reason}\n`))
}
