import { useEffect, useRef } from 'preact/hooks'
import type { Schemas } from '../api.js'
import { CopyButton, Time } from '../ui.js'

/** A secret just handed out by the service, with what it came from: an issue or a roll. */
export interface Shown {
  kind: 'issued' | 'rolled'
  token: Schemas['TokenWithSecret']
}

/**
 * The secret of a token just issued or rolled, shown this once: it lives only in the page's memory (never
 * a URL, storage or a log) and goes when the person dismisses it or leaves the page. The box takes the
 * focus when it appears, so that a screen reader announces it.
 */
export function SecretBox({ shown, onDismiss }: { shown: Shown; onDismiss: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [shown])
  const { token } = shown
  return (
    <section class="secret-box" aria-labelledby="secret-title">
      <h2 id="secret-title" tabIndex={-1} ref={heading}>
        {shown.kind === 'issued' ? 'Secret of the new token' : 'New secret'} “{token.name}”, shown once
      </h2>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> It is the whole bearer token; keep it where
        you keep passwords.
      </p>
      <code class="secret">{token.secret}</code>
      <div class="actions">
        <CopyButton text={token.secret} label="Copy" />
        <button type="button" onClick={onDismiss}>
          Dismiss
        </button>
      </div>
      {shown.kind === 'rolled' ? (
        <p>
          {token.previousSecretExpiresAt ? (
            <>
              The previous secret keeps working until <Time iso={token.previousSecretExpiresAt} />.
            </>
          ) : (
            'The previous secret no longer works.'
          )}
        </p>
      ) : (
        <p>
          {token.expiresAt ? (
            <>
              It expires <Time iso={token.expiresAt} />.
            </>
          ) : (
            'It never expires.'
          )}
        </p>
      )}
    </section>
  )
}
