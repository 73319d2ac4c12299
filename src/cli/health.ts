import { isIPv6 } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { ConfigError, resolveSettings, SERVE_SETTINGS } from '../config.js'
import { parseDuration } from '../duration.js'
import { reportOnStderr } from './report.js'

// One probe waits at most this long: a service that takes longer to say it is ready is not.
const PROBE_TIMEOUT_MS = 5_000
const RETRY_EVERY_MS = 250

/**
 * Where a process on this host reaches the service that listens on host:port. A wildcard address
 * (the container's 0.0.0.0) listens on loopback too.
 */
export function readyzUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `http://${isIPv6(reachable) ? `[${reachable}]` : reachable}:${port}/readyz`
}

/**
 * Asks the service's /readyz, as a supervisor would (a container's HEALTHCHECK, systemd's
 * ExecStartPost): true once it responds 200. With --wait it asks again until then or until the wait
 * is over; the last reason it was not ready goes to stderr.
 */
export async function checkHealth(flags: Record<string, string | undefined>): Promise<boolean> {
  const settings = SERVE_SETTINGS.filter((s) => s.key === 'host' || s.key === 'port')
  const { config } = resolveSettings(settings, flags)
  const host = config.host as string
  const port = config.port as number
  if (port === 0) throw new ConfigError('health needs the port serve listens on: --port (PORT) 0 names none')
  const waitMs = parseDuration(flags.wait ?? '0s')
  if (waitMs === null)
    throw new ConfigError(`invalid --wait "${flags.wait}": expected a duration such as 60s`)
  const url = readyzUrl(host, port)
  const deadline = Date.now() + waitMs
  let reason: string
  for (;;) {
    try {
      const response = await fetch(url, {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        redirect: 'manual',
      })
      await response.body?.cancel()
      if (response.status === 200) return true
      reason = `it answered ${response.status}`
    } catch (error) {
      // fetch says "fetch failed"; what failed (ECONNREFUSED, a timeout) is its cause.
      const cause = (error as { cause?: { message?: string } }).cause
      reason = cause?.message ?? (error as Error).message
    }
    const left = deadline - Date.now()
    if (left <= 0) break
    await sleep(Math.min(RETRY_EVERY_MS, left))
  }
  reportOnStderr(`not ready: ${url}: ${reason}${waitMs > 0 ? ` (waited ${flags.wait})` : ''}`)
  return false
}
