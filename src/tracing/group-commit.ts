import type { Link, Span } from '@opentelemetry/api'
import { tracingInUse } from './active.js'

/** A write waiting for a group commit, with the span of the store call that waits (when traced). */
export interface Waiter {
  span?: Span | undefined
}

/**
 * The span of one group commit (one transaction for the writes of many requests), or undefined when
 * tracing is off or no request in it is sampled. It is a child of the first sampled request's store
 * call, so it is sampled with it; every sampled request's store call links to it, and it links to
 * each of theirs, so that from any request one can reach the commit it waited for, and from the
 * commit every request it responded to.
 */
export function startGroupCommit(
  system: 'sqlite' | 'postgresql',
  waiters: readonly Waiter[],
): Span | undefined {
  const tracing = tracingInUse()
  if (!tracing) return undefined
  const { api, tracer } = tracing
  let parent: Span | undefined
  const links: Link[] = []
  for (const { span } of waiters) {
    if (!span) continue
    const context = span.spanContext()
    // An unsampled request records nothing a link could lead to.
    if ((context.traceFlags & api.TraceFlags.SAMPLED) === 0) continue
    parent ??= span
    links.push({ context })
  }
  if (!parent) return undefined
  const commit = tracer.startSpan(
    `${system} group commit`,
    {
      kind: api.SpanKind.CLIENT,
      links,
      attributes: {
        'db.system.name': system,
        'db.operation.name': 'COMMIT',
        'db.operation.batch.size': waiters.length,
      },
    },
    api.trace.setSpan(api.ROOT_CONTEXT, parent),
  )
  const back = { context: commit.spanContext() }
  for (const { span } of waiters) span?.addLink(back)
  return commit
}
