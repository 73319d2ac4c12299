import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { runCli, startServer } from './helpers/process.js'
import { storeKinds } from './helpers/stores.js'

describe.each(storeKinds)('shutdown behind a load balancer on $name', (kind) => {
  it('answers /readyz 503 from the moment SIGTERM arrives, serves through --drain-delay, then exits 0', async () => {
    const url = await kind.freshUrl()
    const token = (await runCli(['token', 'create', '--name', 'drain', '--database-url', url])).stdout.trim()
    const server = await startServer([
      '--database-url',
      url,
      '--drain-delay',
      '3s',
      '--shutdown-timeout',
      '10s',
    ])
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      server.process.kill('SIGTERM')
      await new Promise((resolve) => setTimeout(resolve, 300))
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(ready.headers.get('retry-after')).toBe('1')
      expect(((await ready.json()) as { error: number }).error).toBe(50301)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      // Requests the load balancer still sends during the delay are served normally.
      const created = await fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"id": 1, "name": "late"}',
      })
      expect(created.status).toBe(200)
      const [code] = await once(server.process, 'exit')
      expect(code).toBe(0)
    } finally {
      await server.stop()
    }
  })
})
