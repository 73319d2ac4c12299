import type { ComponentChildren, JSX } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { ApiError } from './api.js'
import type { Scope } from './session.js'

/** A page: its heading takes the focus when it opens, so a screen reader announces where it is. */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Plant Store console`
    heading.current?.focus()
  }, [title])
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </section>
  )
}

/** What the service said when it refused, in a region read out as soon as it appears. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null
  const text =
    error instanceof ApiError
      ? `${error.message}${error.code === undefined ? '' : ` (${error.code})`}`
      : String((error as Error).message ?? error)
  return (
    <p class="error" role="alert">
      {text}
    </p>
  )
}

/** A short message on what just happened (saved, deleted…), read out politely. */
export function StatusNote({ text }: { text: string | undefined }) {
  return (
    <p class="status" role="status">
      {text ?? ''}
    </p>
  )
}

/** Says that the token lacks a scope, where the thing it would allow would be. */
export function NotAllowed({ scope, what }: { scope: Scope; what: string }) {
  return (
    <p class="not-allowed">
      Your token cannot {what}: it lacks the <code>{scope}</code> scope.
    </p>
  )
}

type InputProps = JSX.InputHTMLAttributes<HTMLInputElement>

/** A labelled text box: its label is its accessible name. */
export function Field({ label, hint, ...input }: InputProps & { label: string; hint?: string }) {
  const id = useRef(`field-${Math.random().toString(36).slice(2)}`).current
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  )
}

/**
 * A button that asks before it acts, in a modal dialog (Escape or "Cancel" backs out). The action's
 * error, if any, is shown in the dialog.
 */
export function ConfirmButton({
  label,
  question,
  confirm = label,
  onConfirm,
  danger = true,
}: {
  label: string
  question: string
  confirm?: string
  onConfirm: () => Promise<void>
  danger?: boolean
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const act = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await onConfirm()
      dialog.current?.close()
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  return (
    <>
      <button type="button" class={danger ? 'danger' : undefined} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog} aria-label={question}>
        <p>{question}</p>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="button" class={danger ? 'danger' : 'primary'} disabled={busy} onClick={act}>
            {confirm}
          </button>
        </div>
      </dialog>
    </>
  )
}

/** Copies a text (a token's secret) to the clipboard, and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState<string>()
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setDone('Copied.')
    } catch {
      setDone('The browser did not allow copying: select the text and copy it.')
    }
  }
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="status">
        {done ?? ''}
      </span>
    </>
  )
}

/** A wide table in a region that scrolls sideways on a narrow screen, and can be scrolled by keyboard. */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard
    <section class="table-region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </section>
  )
}

/** A time as the person's browser writes it, with the exact instant on hover and for machines. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>—</span>
  return (
    <time dateTime={iso} title={iso}>
      {new Date(iso).toLocaleString()}
    </time>
  )
}

export interface Loaded<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

/** Loads what a page shows, again whenever `deps` change or `reload` is called; the last load wins. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    const abort = new AbortController()
    setState((previous) => ({ ...previous, loading: true }))
    load(abort.signal).then(
      (data) => abort.signal.aborted || setState({ data, loading: false }),
      (error) => abort.signal.aborted || setState({ error, loading: false }),
    )
    return () => abort.abort()
  }, [...deps, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return { data: state.data, error: state.error, loading: state.loading, reload }
}
