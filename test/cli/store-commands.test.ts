import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runHere } from '../helpers/cli.js'
import { ROOT } from '../helpers/process.js'
import { storeKinds } from '../helpers/stores.js'

// The token and migrate commands on each store, run through the CLI's entry point in this process
// (runHere). test/process/cli.test.ts runs bin/plantstore for what needs a process of its own.
describe.each(storeKinds)('plantstore token and migrate on $name', (kind) => {
  it('token list shows the token without its secret; --json is one array', async () => {
    const url = await kind.freshUrl()
    const created = await runHere([
      'token',
      'create',
      '--name',
      'ci-bot',
      '--scopes',
      'plants:read,metrics:read',
      '--expires-in',
      '30d',
      '--database-url',
      url,
    ])
    const token = created.stdout.trim()
    const secret = token.slice('pst_0123456789abcdef_'.length)
    const table = await runHere(['token', 'list', '--database-url', url])
    expect(table.code).toBe(0)
    expect(table.stdout).toContain('ci-bot')
    expect(table.stdout).toContain('plants:read,metrics:read')
    expect(table.stdout).not.toContain(secret)
    const json = await runHere(['token', 'list', '--json', '--database-url', url])
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      id: token.slice(4, 20),
      name: 'ci-bot',
      prefix: token.slice(0, 21),
      scopes: ['plants:read', 'metrics:read'],
      lastUsedAt: null,
      revokedAt: null,
      status: 'active',
    })
    const expires = Date.parse(String(rows[0]?.expiresAt)) - Date.parse(String(rows[0]?.createdAt))
    expect(expires).toBe(30 * 86_400_000)
    expect(json.stdout).not.toContain(secret)
  })

  it('token revoke takes the public id; an unknown id exits 1', async () => {
    const url = await kind.freshUrl()
    const token = (await runHere(['token', 'create', '--name', 'x', '--database-url', url])).stdout.trim()
    const id = token.slice(4, 20)
    expect((await runHere(['token', 'revoke', id, '--database-url', url])).code).toBe(0)
    const rows = JSON.parse((await runHere(['token', 'list', '--json', '--database-url', url])).stdout)
    expect(rows[0].status).toBe('revoked')
    const unknown = await runHere(['token', 'revoke', 'ffffffffffffffff', '--database-url', url])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no token')
  })

  it('token create refuses a lifetime past 100 years with exit 2, and stores nothing', async () => {
    const url = await kind.freshUrl()
    for (const lifetime of ['99999999d', '36501d']) {
      const res = await runHere([
        'token',
        'create',
        '--name',
        'x',
        '--expires-in',
        lifetime,
        '--database-url',
        url,
      ])
      expect(res.code).toBe(2)
      expect(res.stdout).toBe('')
      expect(res.stderr).toMatch(/^plantstore: invalid --expires-in .*at most 36500d/)
    }
    const created = await runHere([
      'token',
      'create',
      '--name',
      'x',
      '--expires-in',
      '36500d',
      '--database-url',
      url,
    ])
    expect(created.code).toBe(0)
    const rows = JSON.parse((await runHere(['token', 'list', '--json', '--database-url', url])).stdout)
    expect(rows).toHaveLength(1)
    expect(Date.parse(rows[0].expiresAt) - Date.parse(rows[0].createdAt)).toBe(36_500 * 86_400_000)
  })

  it('migrate creates the schema, says which migrations it applied, and exits 0', async () => {
    const url = await kind.freshUrl()
    const res = await runHere(['migrate', '--database-url', url])
    expect(res.code).toBe(0)
    const migrations = readdirSync(join(ROOT, `src/store/${kind.name}/migrations`))
      .sort()
      .map((file) => file.replace(/\.sql$/, ''))
    expect(res.stderr).toBe(`schema is up to date (applied ${migrations.join(', ')})\n`)
    const again = await runHere(['migrate', '--database-url', url])
    expect(again).toMatchObject({ code: 0, stderr: 'schema is up to date (no migration to apply)\n' })
  })
})
