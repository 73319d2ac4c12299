import cluster from 'node:cluster'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { startCluster } from '../src/cli/cluster.js'
import { resolveServeConfig } from '../src/config.js'
import { createLogger } from '../src/log.js'
import { BIN, runCli } from './helpers/process.js'
import { tempDir } from './helpers/stores.js'

/** The primary runs in this process; its workers are real `plantstore serve` processes. */
function primary(databaseUrl: string) {
  const args = [
    'serve',
    '--port',
    '0',
    '--database-url',
    databaseUrl,
    '--workers',
    '2',
    '--log-level',
    'warn',
  ]
  cluster.setupPrimary({ exec: BIN, args, execArgv: [], silent: true })
  let log = ''
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk)
      done()
    },
  })
  const config = resolveServeConfig({ port: '0', databaseUrl, workers: '2' }, {})
  return { running: startCluster(config, createLogger('info', sink)), log: () => log }
}

describe('the cluster primary', () => {
  it('announces the address once both workers listen, and stops both cleanly', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const { running, log } = primary(url)
    const address = await running.ready
    const workers = (JSON.parse(log().split('\n')[0] as string) as { workers: number[] }).workers
    expect(workers).toHaveLength(2)
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${address}/healthz`, { headers: { connection: 'close' } })
      expect(res.status).toBe(200)
    }
    expect(await running.stop('test')).toBe(0)
    expect(await running.done).toBe(0)
    expect(log()).toContain('"codes":[0,0]')
  })

  it('gives up with code 1 when a worker fails right after starting', async () => {
    // A directory is no database file: every worker fails as it opens it.
    const { running, log } = primary(`sqlite:${tempDir()}`)
    expect(await running.done).toBe(1)
    expect(log()).toContain('a worker failed right after starting')
  })
})
