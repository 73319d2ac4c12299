import { useEffect, useState } from 'preact/hooks'
import { nextPageQuery } from '../../client/link.js'
import { type Api, must } from '../api.js'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, Page, StatusNote, Time, useLoad } from '../ui.js'
import { type Attempt, type Delivery, outcomeOf, Pager, statusOf, usePager } from './webhooks-common.js'

const PAGE_SIZE = 20
/** While the delivery is pending, it and its attempts are read again this often, to show how it ends. */
const PENDING_REFRESH_MS = 1000
/**
 * The API has no read of one delivery: it is looked for among the subscription's latest ones, this
 * many pages of this many, newest first (a delivery opened from the list is among them).
 */
const SEARCH_PAGES = 5
const SEARCH_PAGE_SIZE = 200

async function findDelivery(
  api: Api,
  webhookId: string,
  deliveryId: string,
  signal: AbortSignal,
): Promise<Delivery | null> {
  let after: string | undefined
  for (let page = 0; page < SEARCH_PAGES; page++) {
    const query = { limit: SEARCH_PAGE_SIZE, ...(after ? { after } : {}) }
    const { data, response } = await must(
      api.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query }, signal }),
    )
    const found = data.data.find((d) => d.id === deliveryId)
    if (found) return found
    after = nextPageQuery(response)?.get('after') ?? undefined
    if (after === undefined) break
  }
  return null
}

/** One delivery: its state, every attempt (newest first) and "Retry". */
export function DeliveryView({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const { api } = useSession()
  const pager = usePager()
  const delivery = useLoad(
    (signal) => findDelivery(api, webhookId, deliveryId, signal),
    [webhookId, deliveryId],
  )
  const attempts = useLoad(
    async (signal) => {
      const query = { limit: PAGE_SIZE, ...(pager.after ? { after: pager.after } : {}) }
      const { data, response } = await must(
        api.GET('/webhooks/{id}/deliveries/{deliveryId}/attempts', {
          params: { path: { id: webhookId, deliveryId }, query },
          signal,
        }),
      )
      return { attempts: data.data, next: nextPageQuery(response)?.get('after') ?? undefined }
    },
    [webhookId, deliveryId, pager.after],
  )
  const [retried, setRetried] = useState<Delivery>()
  const [note, setNote] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)

  // The retry's response is newer than what was found before it, until a search made since comes back.
  useEffect(() => setRetried(undefined), [delivery.data])
  const shown = retried ?? delivery.data
  const pending = shown?.status === 'pending'
  useEffect(() => {
    if (!pending || delivery.loading || attempts.loading) return
    const timer = setTimeout(() => {
      delivery.reload()
      attempts.reload()
    }, PENDING_REFRESH_MS)
    return () => clearTimeout(timer)
  }, [pending, delivery.loading, attempts.loading, delivery.data, attempts.data])

  const retry = async () => {
    setBusy(true)
    setError(undefined)
    setNote(undefined)
    try {
      const queued = (
        await must(
          api.POST('/webhooks/{id}/deliveries/{deliveryId}/retry', {
            params: { path: { id: webhookId, deliveryId } },
          }),
        )
      ).data
      setRetried(queued)
      setNote('Queued to be sent again now.')
      delivery.reload()
      attempts.reload()
    } catch (cause) {
      setError(cause)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Page title="Delivery">
      <p>
        <a href={href('webhooks', webhookId)}>Back to the subscription</a>
      </p>
      <ErrorNote error={delivery.error} />
      <dl class="webhook-summary">
        <dt>Delivery</dt>
        <dd class="id">{deliveryId}</dd>
        {shown ? (
          <>
            <dt>Event</dt>
            <dd>
              <code>{shown.eventType}</code> <span class="id">{shown.eventId}</span>
            </dd>
            <dt>Status</dt>
            <dd class="delivery-status">{statusOf(shown)}</dd>
            <dt>Attempts</dt>
            <dd>{shown.attempts}</dd>
            <dt>Next attempt</dt>
            <dd>
              <Time iso={shown.nextAttemptAt} />
            </dd>
            <dt>Created</dt>
            <dd>
              <Time iso={shown.createdAt} />
            </dd>
          </>
        ) : delivery.data === null ? (
          <>
            <dt>Status</dt>
            <dd>Not shown: it is not among the subscription's latest deliveries.</dd>
          </>
        ) : null}
      </dl>
      <StatusNote text={note} />
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="primary" disabled={busy} onClick={retry}>
          Retry
        </button>
      </div>
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title">Attempts</h2>
        <ErrorNote error={attempts.error} />
        {attempts.data === undefined ? (
          attempts.loading ? (
            <p class="loading">Loading…</p>
          ) : null
        ) : attempts.data.attempts.length === 0 ? (
          <p>No attempt yet.</p>
        ) : (
          <ol class="attempts">
            {attempts.data.attempts.map((attempt) => (
              <AttemptItem key={`${attempt.attemptedAt}-${attempt.durationMs}`} attempt={attempt} />
            ))}
          </ol>
        )}
        <Pager pager={pager} next={attempts.data?.next} what="attempts" />
      </section>
    </Page>
  )
}

function AttemptItem({ attempt }: { attempt: Attempt }) {
  return (
    <li class="card attempt">
      <dl class="webhook-summary">
        <dt>Time</dt>
        <dd>
          <Time iso={attempt.attemptedAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{attempt.durationMs} ms</dd>
        <dt>{attempt.statusCode === null ? 'Error' : 'Status'}</dt>
        <dd>{outcomeOf(attempt)}</dd>
      </dl>
      {attempt.body === null ? (
        <p class="hint">No response came.</p>
      ) : (
        <>
          <p class="hint">
            {attempt.bodyTruncated ? "The response's first KiB (it went on):" : "The response's body:"}
          </p>
          <pre>{attempt.body === '' ? '(empty)' : attempt.body}</pre>
        </>
      )}
    </li>
  )
}
