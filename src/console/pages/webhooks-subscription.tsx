import { useState } from 'preact/hooks'
import { must } from '../api.js'
import { go, href } from '../route.js'
import { useSession } from '../session.js'
import { ConfirmButton, ErrorNote, Field, Page, StatusNote, Time, useLoad } from '../ui.js'
import {
  EventChoice,
  type EventType,
  eventList,
  SecretOnce,
  sayOnList,
  stateOf,
  type Webhook,
} from './webhooks-common.js'
import { DeliveryList } from './webhooks-deliveries.js'

/** One subscription: what it is, its changes and actions, replay and recovery, and its deliveries. */
export function SubscriptionView({ id }: { id: string }) {
  const { api } = useSession()
  const loaded = useLoad(
    async (signal) => (await must(api.GET('/webhooks/{id}', { params: { path: { id } }, signal }))).data,
    [id],
  )
  const webhook = loaded.data
  const [note, setNote] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const [secret, setSecret] = useState<string>()
  // Raised when an action queued deliveries, so that the list shows them.
  const [round, setRound] = useState(0)
  const queued = () => setRound((n) => n + 1)

  /** Runs an action of this page, showing what it did or what the service refused. */
  const act = async (action: () => Promise<string>) => {
    setBusy(true)
    setError(undefined)
    setNote(undefined)
    try {
      setNote(await action())
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  const path = { params: { path: { id } } }
  const setDisabled = (disabled: boolean) =>
    act(async () => {
      await must(api.PATCH('/webhooks/{id}', { ...path, body: { disabled } }))
      loaded.reload()
      return disabled
        ? 'Disabled: no events are queued for it until it is enabled again.'
        : 'Enabled: its pending deliveries resume.'
    })
  const sendTest = () =>
    act(async () => {
      const delivery = (await must(api.POST('/webhooks/{id}/test', path))).data
      queued()
      return `Test message queued as delivery ${delivery.id}.`
    })
  const rotate = async () => {
    const rotated = (await must(api.POST('/webhooks/{id}/rotate-secret', path))).data
    setSecret(rotated.secret)
    setNote(undefined)
    loaded.reload()
  }
  const remove = async () => {
    await must(api.DELETE('/webhooks/{id}', path))
    sayOnList(`Deleted the subscription to ${webhook?.url ?? id}.`)
    go('webhooks')
  }

  return (
    <Page title="Webhook subscription">
      <p>
        <a href={href('webhooks')}>All subscriptions</a>
      </p>
      <ErrorNote error={loaded.error} />
      {webhook === undefined ? (
        loaded.loading ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : (
        <>
          <Summary webhook={webhook} />
          <StatusNote text={note} />
          <ErrorNote error={error} />
          {secret ? <SecretOnce secret={secret} title="New signing secret" /> : null}
          <div class="actions">
            <button type="button" disabled={busy} onClick={sendTest}>
              Send test
            </button>
            {webhook.disabled ? (
              <button type="button" disabled={busy} onClick={() => setDisabled(false)}>
                Enable
              </button>
            ) : (
              <button type="button" disabled={busy} onClick={() => setDisabled(true)}>
                Disable
              </button>
            )}
            <ConfirmButton
              label="Rotate secret"
              question="Rotate the signing secret? For 24 hours the current secret signs beside the new one."
              confirm="Rotate"
              danger={false}
              onConfirm={rotate}
            />
            <ConfirmButton
              label="Delete"
              question={`Delete the subscription to ${webhook.url} and every delivery it has?`}
              onConfirm={remove}
            />
          </div>
          <EditForm key={webhook.id} webhook={webhook} onSaved={loaded.reload} />
          <div class="webhook-since">
            <SinceForm id={id} action="replay" onQueued={queued} />
            <SinceForm id={id} action="recover" onQueued={queued} />
          </div>
          <DeliveryList webhookId={id} round={round} />
        </>
      )}
    </Page>
  )
}

function Summary({ webhook }: { webhook: Webhook }) {
  return (
    <dl class="webhook-summary">
      <dt>URL</dt>
      <dd class="webhook-url">{webhook.url}</dd>
      <dt>Description</dt>
      <dd>{webhook.description ?? '—'}</dd>
      <dt>State</dt>
      <dd>
        {stateOf(webhook)}
        {webhook.disabledAt ? (
          <>
            {' since '}
            <Time iso={webhook.disabledAt} />
          </>
        ) : null}
      </dd>
      {webhook.failingSince ? (
        <>
          <dt>Failing since</dt>
          <dd>
            <Time iso={webhook.failingSince} />
          </dd>
        </>
      ) : null}
      <dt>Events</dt>
      <dd>{webhook.events.join(', ')}</dd>
      <dt>Id</dt>
      <dd class="id">{webhook.id}</dd>
      <dt>Created</dt>
      <dd>
        <Time iso={webhook.createdAt} />
      </dd>
      {webhook.previousSecretExpiresAt ? (
        <>
          <dt>Previous secret signs until</dt>
          <dd>
            <Time iso={webhook.previousSecretExpiresAt} />
          </dd>
        </>
      ) : null}
    </dl>
  )
}

/** Changes the URL, description and events; only what changed is sent. */
function EditForm({ webhook, onSaved }: { webhook: Webhook; onSaved: () => void }) {
  const { api } = useSession()
  const [url, setUrl] = useState(webhook.url)
  const [description, setDescription] = useState(webhook.description ?? '')
  const [events, setEvents] = useState<Set<EventType>>(() => new Set(webhook.events as EventType[]))
  const [error, setError] = useState<unknown>()
  const [note, setNote] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const chosen = eventList(events)
    const body = {
      ...(url === webhook.url ? {} : { url }),
      ...(description === (webhook.description ?? '') ? {} : { description: description || null }),
      ...(chosen.join() === webhook.events.join() ? {} : { events: chosen }),
    }
    setError(undefined)
    if (Object.keys(body).length === 0) {
      setNote('Nothing changed.')
      return
    }
    setBusy(true)
    setNote(undefined)
    try {
      await must(api.PATCH('/webhooks/{id}', { params: { path: { id: webhook.id } }, body }))
      setNote('Saved.')
      onSaved()
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="card" aria-labelledby="edit-title" onSubmit={submit}>
      <h2 id="edit-title">Edit</h2>
      <Field label="URL" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <Field
        label="Description"
        value={description}
        maxLength={500}
        onInput={(e) => setDescription(e.currentTarget.value)}
      />
      <EventChoice chosen={events} onChange={setEvents} />
      <ErrorNote error={error} />
      <StatusNote text={note} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Save
        </button>
      </div>
    </form>
  )
}

const SINCE_TEXT = {
  replay: {
    title: 'Replay',
    explain: 'Sends again every event of the subscribed types since this time, with the same webhook-id.',
  },
  recover: {
    title: 'Recover',
    explain:
      'Sends again only the deliveries that ended failed since this time, with a fresh retry schedule.',
  },
} as const

/** Replay or recover since a time, given in the browser's time zone; says how many were queued. */
function SinceForm({
  id,
  action,
  onQueued,
}: {
  id: string
  action: 'replay' | 'recover'
  onQueued: () => void
}) {
  const { api } = useSession()
  const [since, setSince] = useState('')
  const [error, setError] = useState<unknown>()
  const [note, setNote] = useState<string>()
  const [busy, setBusy] = useState(false)
  const text = SINCE_TEXT[action]
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setNote(undefined)
    try {
      // A datetime-local value has no offset: Date reads it in the browser's time zone, as it was shown.
      const instant = new Date(since)
      if (Number.isNaN(instant.getTime())) throw new Error('Give a date and time.')
      const request = { params: { path: { id } }, body: { since: instant.toISOString() } }
      const { queued } = (
        await must(
          action === 'replay'
            ? api.POST('/webhooks/{id}/replay', request)
            : api.POST('/webhooks/{id}/recover', request),
        )
      ).data
      setNote(`${text.title}: ${String(queued)} ${queued === 1n ? 'delivery' : 'deliveries'} queued.`)
      onQueued()
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  const titleId = `${action}-title`
  return (
    <form class="card" aria-labelledby={titleId} onSubmit={submit}>
      <h2 id={titleId}>{text.title}</h2>
      <p class="hint">{text.explain}</p>
      <Field
        label="Since"
        type="datetime-local"
        step={1}
        hint="In your browser's time zone."
        required
        value={since}
        onInput={(e) => setSince(e.currentTarget.value)}
      />
      <ErrorNote error={error} />
      <StatusNote text={note} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {text.title}
        </button>
      </div>
    </form>
  )
}
