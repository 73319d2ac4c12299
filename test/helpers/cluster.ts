import { type IncomingHttpHeaders, request } from 'node:http'
import { logEntries } from './log.js'

export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * One request on a new connection: a cluster hands each connection to the next free worker, so
 * consecutive calls reach every worker.
 */
export function callOnNewConnection(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        agent: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const lines = (log: string) => logEntries<{ pid: number; msg: string; url?: string; workers?: number[] }>(log)

/** Worker pids, as the primary lists them when it announces the address. */
export function workerPids(log: string): number[] {
  return lines(log).find((l) => l.msg.startsWith('listening on'))?.workers ?? []
}

/** The pids of every worker that became ready, replacements included, in order. */
export function readyWorkers(log: string): number[] {
  return lines(log)
    .filter((l) => l.msg.startsWith('worker ready on'))
    .map((l) => l.pid)
}

/** The replacement workers the primary saw listen, in order: from then on their exit is a crash. */
export function replacementsListening(log: string): number[] {
  return lines(log)
    .filter((l) => l.msg === 'replacement worker listening')
    .map((l) => (l as { worker?: number }).worker as number)
}

/** The addresses the workers said they listen on (`worker ready on URL`). */
export function readyAddresses(log: string): Set<string> {
  return new Set(
    lines(log)
      .filter((l) => l.msg.startsWith('worker ready on '))
      .map((l) => l.msg.slice('worker ready on '.length)),
  )
}

/** The pids that answered requests (to `url` only, when given), from their debug request lines. */
export function servedBy(log: string, url?: string): Set<number> {
  return new Set(answeredBy(log, url))
}

/** The pid of each answer (to `url` only, when given), in the order the log has them. */
export function answeredBy(log: string, url?: string): number[] {
  return lines(log)
    .filter((l) => l.msg === 'request completed' && (url === undefined || l.url === url))
    .map((l) => l.pid)
}

/** The pids that took the webhook dispatcher lease, in order. */
export function leaseTakers(log: string): number[] {
  return lines(log)
    .filter((l) => l.msg.startsWith('webhook dispatcher lease acquired'))
    .map((l) => l.pid)
}

/** Resolves once `probe` holds, checking every 50 ms; rejects after `timeoutMs`. */
export async function waitUntil(probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
