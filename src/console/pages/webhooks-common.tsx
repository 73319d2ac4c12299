import { useEffect, useRef, useState } from 'preact/hooks'
import type { Schemas } from '../api.js'
import { CopyButton } from '../ui.js'

export type Webhook = Schemas['Webhook']
export type Delivery = Schemas['Delivery']
export type Attempt = Schemas['DeliveryAttempt']
export type EventType = NonNullable<Schemas['NewWebhook']['events']>[number]

/** The event types a subscription can ask for, in the order the API documents them. */
export const EVENT_TYPES: readonly EventType[] = ['plant.created', 'plant.updated', 'plant.deleted']

/** A subscription's state in words: colour alone would say nothing to a screen reader. */
export function stateOf(webhook: Webhook): string {
  if (!webhook.disabled) return 'Enabled'
  return webhook.disabledReason === 'failing' ? 'Disabled: its attempts kept failing' : 'Disabled'
}

const STATUS_WORDS: Record<Delivery['status'], string> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed',
}

export const statusOf = (delivery: Delivery): string => STATUS_WORDS[delivery.status]

/** How an attempt ended: the receiver's status, or the network error when no response came. */
export function outcomeOf(attempt: { statusCode: number | null; error: string | null }): string {
  if (attempt.statusCode === null) return attempt.error ?? 'No response'
  return attempt.error ? `${attempt.statusCode} (${attempt.error})` : String(attempt.statusCode)
}

/**
 * A signing secret the service shows only once: in full, with a button to copy it, and a warning that
 * it will not be shown again.
 */
export function SecretOnce({ secret, title }: { secret: string; title: string }) {
  // The form or dialog that asked for it is gone: the focus goes to what it gave.
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [secret])
  return (
    <section class="card webhook-secret" aria-label={title}>
      <h2 tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p>Copy it now: it is not shown again.</p>
      <code class="secret">{secret}</code>
      <div class="actions">
        <CopyButton text={secret} label="Copy secret" />
      </div>
    </section>
  )
}

/** The event types to subscribe to, as checkboxes in a named group. */
export function EventChoice({
  chosen,
  onChange,
}: {
  chosen: ReadonlySet<EventType>
  onChange: (chosen: Set<EventType>) => void
}) {
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(type)
    else next.delete(type)
    onChange(next)
  }
  return (
    <fieldset class="events">
      <legend>Events</legend>
      {EVENT_TYPES.map((type) => (
        <label key={type}>
          <input
            type="checkbox"
            checked={chosen.has(type)}
            onChange={(event) => toggle(type, event.currentTarget.checked)}
          />{' '}
          <code>{type}</code>
        </label>
      ))}
    </fieldset>
  )
}

/** The events as the API takes them: in the documented order. */
export const eventList = (chosen: ReadonlySet<EventType>): EventType[] =>
  EVENT_TYPES.filter((type) => chosen.has(type))

/** What the list of subscriptions says when it opens next (that one was deleted), said once. */
let listNote: string | undefined
export const sayOnList = (text: string): void => {
  listNote = text
}
export function takeListNote(): string | undefined {
  const text = listNote
  listNote = undefined
  return text
}

/**
 * Paging by the `Link: rel="next"` cursors: the cursors of the pages opened so far, so that "Newer"
 * goes back one. `after` is the current page's (undefined on the first).
 */
export function usePager() {
  const [cursors, setCursors] = useState<string[]>([])
  return {
    after: cursors.at(-1),
    first: cursors.length === 0,
    older: (next: string) => setCursors([...cursors, next]),
    newer: () => setCursors(cursors.slice(0, -1)),
    reset: () => setCursors([]),
  }
}

/** The buttons of a paged list: back to newer entries, on to older ones while a page follows. */
export function Pager({
  pager,
  next,
  what,
}: {
  pager: ReturnType<typeof usePager>
  next: string | undefined
  what: string
}) {
  if (pager.first && next === undefined) return null
  return (
    <div class="actions">
      <button type="button" disabled={pager.first} onClick={pager.newer}>
        Newer {what}
      </button>
      <button type="button" disabled={next === undefined} onClick={() => next && pager.older(next)}>
        Older {what}
      </button>
    </div>
  )
}
