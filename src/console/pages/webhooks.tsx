import { useState } from 'preact/hooks'
import { must } from '../api.js'
import { href, useRoute } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, Field, Page, StatusNote, TableRegion, Time, useLoad } from '../ui.js'
import {
  EVENT_TYPES,
  EventChoice,
  type EventType,
  eventList,
  SecretOnce,
  stateOf,
  takeListNote,
  type Webhook,
} from './webhooks-common.js'
import { DeliveryView } from './webhooks-delivery.js'
import { SubscriptionView } from './webhooks-subscription.js'
import './webhooks.css'

/**
 * The Webhooks section routes its own views: `#/webhooks` the subscriptions, `#/webhooks/<id>` one of
 * them with its deliveries, `#/webhooks/<id>/deliveries/<deliveryId>` one delivery's attempts.
 */
export function WebhooksPage() {
  const [, id, sub, deliveryId] = useRoute()
  if (id !== undefined && sub === 'deliveries' && deliveryId !== undefined)
    return <DeliveryView webhookId={id} deliveryId={deliveryId} />
  if (id !== undefined) return <SubscriptionView id={id} />
  return <SubscriptionList />
}

function SubscriptionList() {
  const { api } = useSession()
  const [note] = useState(takeListNote)
  const [creating, setCreating] = useState(false)
  const [created, setCreated] = useState<{ id: string; url: string; secret: string }>()
  const list = useLoad(async (signal) => (await must(api.GET('/webhooks', { signal }))).data.data, [])
  return (
    <Page title="Webhooks">
      <StatusNote text={note} />
      {created ? (
        <>
          <SecretOnce secret={created.secret} title="Signing secret of the new subscription" />
          <p>
            Subscribed <code>{created.url}</code>: <a href={href('webhooks', created.id)}>open it</a>.
          </p>
        </>
      ) : null}
      <div class="actions">
        <button type="button" class="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          New subscription
        </button>
      </div>
      {creating ? (
        <CreateForm
          onCreated={(webhook) => {
            setCreated({ id: webhook.id, url: webhook.url, secret: webhook.secret })
            setCreating(false)
            list.reload()
          }}
        />
      ) : null}
      <h2 id="subscriptions-title">Subscriptions</h2>
      <ErrorNote error={list.error} />
      {list.data === undefined ? (
        list.loading ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : list.data.length === 0 ? (
        <p>No subscriptions yet.</p>
      ) : (
        <SubscriptionTable webhooks={list.data} />
      )}
    </Page>
  )
}

function SubscriptionTable({ webhooks }: { webhooks: Webhook[] }) {
  return (
    <TableRegion label="Subscriptions">
      <thead>
        <tr>
          <th scope="col">URL</th>
          <th scope="col">Description</th>
          <th scope="col">Events</th>
          <th scope="col">State</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {webhooks.map((webhook) => (
          <tr key={webhook.id}>
            <td class="webhook-url">
              <a href={href('webhooks', webhook.id)}>{webhook.url}</a>
            </td>
            <td>{webhook.description ?? '—'}</td>
            <td>{webhook.events.join(', ')}</td>
            <td>{stateOf(webhook)}</td>
            <td>
              <Time iso={webhook.createdAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </TableRegion>
  )
}

function CreateForm({ onCreated }: { onCreated: (webhook: Webhook & { secret: string }) => void }) {
  const { api } = useSession()
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<Set<EventType>>(() => new Set(EVENT_TYPES))
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const body = {
        url,
        description: description === '' ? null : description,
        // Every type is the default: leaving it out lets the service say what "every" is.
        ...(events.size === EVENT_TYPES.length ? {} : { events: eventList(events) }),
      }
      onCreated((await must(api.POST('/webhooks', { body }))).data)
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form id="new-subscription" class="card" aria-labelledby="new-subscription-title" onSubmit={submit}>
      <h2 id="new-subscription-title">New subscription</h2>
      <Field
        label="URL"
        type="url"
        required
        value={url}
        hint="Where each event is POSTed: an http or https address."
        onInput={(e) => setUrl(e.currentTarget.value)}
      />
      <Field
        label="Description"
        value={description}
        maxLength={500}
        onInput={(e) => setDescription(e.currentTarget.value)}
      />
      <EventChoice chosen={events} onChange={setEvents} />
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Create subscription
        </button>
      </div>
    </form>
  )
}
