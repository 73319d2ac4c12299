import { useEffect, useState } from 'preact/hooks'
import { nextPageQuery } from '../../client/link.js'
import { must } from '../api.js'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { ErrorNote, TableRegion, Time, useLoad } from '../ui.js'
import { type Delivery, outcomeOf, Pager, statusOf, usePager } from './webhooks-common.js'

const PAGE_SIZE = 20
/** While a delivery shown is pending, the list is read again this often, to show how it ends. */
const PENDING_REFRESH_MS = 2000

type StatusFilter = Delivery['status'] | ''

/** A subscription's deliveries, newest first, a page at a time, filtered by status. */
export function DeliveryList({ webhookId, round }: { webhookId: string; round: number }) {
  const { api } = useSession()
  const [status, setStatus] = useState<StatusFilter>('')
  const pager = usePager()
  const list = useLoad(
    async (signal) => {
      const query = {
        limit: PAGE_SIZE,
        ...(status ? { status } : {}),
        ...(pager.after ? { after: pager.after } : {}),
      }
      const { data, response } = await must(
        api.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query }, signal }),
      )
      return { deliveries: data.data, next: nextPageQuery(response)?.get('after') ?? undefined }
    },
    [webhookId, status, pager.after, round],
  )
  const pending = list.data?.deliveries.some((d) => d.status === 'pending') ?? false
  useEffect(() => {
    if (!pending || list.loading) return
    const timer = setTimeout(list.reload, PENDING_REFRESH_MS)
    return () => clearTimeout(timer)
  }, [pending, list.loading, list.data])

  return (
    <div class="webhook-deliveries">
      <h2>Deliveries</h2>
      <div class="toolbar">
        <div class="field">
          <label for="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(event) => {
              setStatus(event.currentTarget.value as StatusFilter)
              pager.reset()
            }}
          >
            <option value="">Any</option>
            <option value="pending">Pending</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed</option>
          </select>
        </div>
        <button type="button" onClick={list.reload}>
          Refresh deliveries
        </button>
      </div>
      <ErrorNote error={list.error} />
      {list.data === undefined ? (
        list.loading ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : list.data.deliveries.length === 0 ? (
        <p>{status ? `No ${status} deliveries.` : 'No deliveries yet.'}</p>
      ) : (
        <TableRegion label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last attempt</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td>
                  <a class="id" href={href('webhooks', webhookId, 'deliveries', delivery.id)}>
                    {delivery.id}
                  </a>
                </td>
                <td>
                  <code>{delivery.eventType}</code>
                  <br />
                  <small class="id">{delivery.eventId}</small>
                </td>
                <td>{statusOf(delivery)}</td>
                <td>{delivery.attempts}</td>
                <td>
                  {delivery.lastAttemptAt ? (
                    <>
                      <Time iso={delivery.lastAttemptAt} />
                      <br />
                      {outcomeOf({ statusCode: delivery.lastStatusCode, error: delivery.lastError })}
                      {delivery.lastDurationMs === null ? null : `, ${delivery.lastDurationMs} ms`}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  <Time iso={delivery.nextAttemptAt} />
                </td>
                <td>
                  <Time iso={delivery.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </TableRegion>
      )}
      <Pager pager={pager} next={list.data?.next} what="deliveries" />
    </div>
  )
}
