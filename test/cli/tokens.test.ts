import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { makeApp } from '../helpers/app.js'
import { runHere } from '../helpers/cli.js'
import { BIN, ROOT } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

// The token commands run in this process (the same code bin/plantstore runs), so that what they print
// can be read and the token they issue used against an app on the same database.
const cli = runHere

describe('token commands', () => {
  afterEach(() => {
    process.exitCode = undefined
  })

  it('create a token that lists plants, list it, and revoke it', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const created = await cli([
      'token',
      'create',
      '--name',
      'reader',
      '--scopes',
      'plants:read',
      '--expires-in',
      '1d',
      '--database-url',
      url,
    ])
    expect(created.code).toBe(0)
    const token = created.stdout.trim()
    expect(token).toMatch(/^pst_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
    const id = token.split('_')[1] as string

    const listed = await cli(['token', 'list', '--json', '--database-url', url])
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { id, name: 'reader', scopes: ['plants:read'], status: 'active' },
    ])
    const table = await cli(['token', 'list', '--database-url', url])
    expect(table.stdout).toMatch(new RegExp(`^ID +NAME[^\\n]*\\n${id} +reader`))

    expect((await cli(['token', 'revoke', id, '--database-url', url])).code).toBe(0)
    expect((await cli(['token', 'revoke', 'ffffffffffffffff', '--database-url', url])).code).toBe(1)
    const after = await cli(['token', 'list', '--json', '--database-url', url])
    expect(JSON.parse(after.stdout)[0].status).toBe('revoked')
  })

  it('revokes a created token that standard output did not take, and fails', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    expect((await cli(['migrate', '--database-url', url])).code).toBe(0)
    const { code, stderr } = await runHere(
      ['token', 'create', '--name', 'lost', '--database-url', url],
      {},
      { stdoutFails: 'EPIPE' },
    )
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /^plantstore: cannot write the token to standard output \(EPIPE\); token [0-9a-f]{16} was revoked, issue another\n$/,
    )
    const listed = await cli(['token', 'list', '--json', '--database-url', url])
    expect(JSON.parse(listed.stdout)).toMatchObject([{ name: 'lost', status: 'revoked' }])
  })

  it('issues no token when standard output is closed or /dev/null, where nobody would receive it', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    expect((await cli(['migrate', '--database-url', url])).code).toBe(0)
    for (const redirect of ['>&-', '>/dev/null']) {
      // The real command from a shell: Node itself reopens a closed standard output on /dev/null.
      const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          'sh',
          ['-c', `exec "$0" token create --name lost --database-url "$1" ${redirect}`, BIN, url],
          { cwd: ROOT, timeout: 30_000 },
          (error, _stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr }),
        )
      })
      expect([redirect, code]).toEqual([redirect, 1])
      expect(stderr).toMatch(
        /^plantstore: cannot write the token to standard output \(it is closed or \/dev\/null/,
      )
    }
    const listed = await cli(['token', 'list', '--json', '--database-url', url])
    expect(JSON.parse(listed.stdout)).toEqual([])
  })

  it('revokes by the id in either case, by the prefix token list shows, or by the whole token', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const tokens: string[] = []
    for (const name of ['a', 'b', 'c']) {
      tokens.push((await cli(['token', 'create', '--name', name, '--database-url', url])).stdout.trim())
    }
    const [upper, prefix, whole] = tokens as [string, string, string]
    const idOf = (token: string) => token.slice(4, 20)
    for (const given of [idOf(upper).toUpperCase(), `pst_${idOf(prefix)}_`, whole]) {
      const res = await cli(['token', 'revoke', given, '--database-url', url])
      expect(res.code).toBe(0)
      expect(res.stderr).toMatch(/^token [0-9a-f]{16} revoked\n$/)
      expect(res.stderr).not.toContain(whole.slice(21))
    }
    const listed = JSON.parse(
      (await cli(['token', 'list', '--json', '--database-url', url])).stdout,
    ) as Array<{
      id: string
      status: string
    }>
    expect(listed.map((t) => [t.id, t.status]).sort()).toEqual(tokens.map((t) => [idOf(t), 'revoked']).sort())
    // A token-shaped argument whose id is unknown is still not found, and its secret is not repeated.
    const stranger = `pst_ffffffffffffffff_${'A'.repeat(43)}`
    const unknown = await cli(['token', 'revoke', stranger, '--database-url', url])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe('no token with id ffffffffffffffff\n')
    // A token pasted without its first characters is no id: it is not quoted, as it is most of a secret.
    for (const clipped of [whole.slice(1), whole.slice(2), whole.slice(5)]) {
      const res = await cli(['token', 'revoke', clipped, '--database-url', url])
      expect(res.code).toBe(1)
      expect(res.stderr).toBe('no token with that id: an id is the 16 hex digits `token list` shows\n')
    }
  })

  it('leaves a token revoked before as it was, and says so', async () => {
    const path = join(tempDir(), 'p.db')
    const url = `sqlite:${path}`
    const token = (await cli(['token', 'create', '--name', 'leaked', '--database-url', url])).stdout.trim()
    const id = token.slice(4, 20)
    expect((await cli(['token', 'revoke', id, '--database-url', url])).stderr).toBe(`token ${id} revoked\n`)
    const revokedAt = async () =>
      JSON.parse((await cli(['token', 'list', '--json', '--database-url', url])).stdout)[0].revokedAt
    const epoch = () => {
      const db = new Database(path, { readonly: true })
      try {
        return db.prepare("SELECT value FROM meta WHERE key = 'token_epoch'").pluck().get()
      } finally {
        db.close()
      }
    }
    const first = await revokedAt()
    const before = epoch()

    await new Promise((r) => setTimeout(r, 5))
    const again = await cli(['token', 'revoke', token, '--database-url', url])
    expect(again).toEqual({ stdout: '', stderr: `token ${id} was already revoked\n`, code: 0 })
    // Every server drops its cache of verified tokens when the epoch moves: nothing was revoked.
    expect(epoch()).toBe(before)
    expect(await revokedAt()).toBe(first)
  })

  it('lines up the table by the columns a name takes on screen, not by its UTF-16 length', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    // Each name with the columns a terminal gives it: CJK and emoji take two, an accent none.
    const names: Array<[string, number]> = [
      ['reader', 6],
      ['植物園', 6],
      ['🌱 fern', 7],
      ['e\u0301te', 3],
      ['👩\u200d🌾', 2],
    ]
    const ids: string[] = []
    for (const [name] of names) {
      ids.push((await cli(['token', 'create', '--name', name, '--database-url', url])).stdout.slice(4, 20))
    }
    const lines = (await cli(['token', 'list', '--database-url', url])).stdout.split('\n')
    expect(lines[0]).toMatch(/^ID {16}NAME {5}PREFIX /)
    names.forEach(([name, width], i) => {
      expect(lines[i + 1]?.startsWith(`${ids[i]}  ${name}${' '.repeat(7 - width)}  pst_${ids[i]}_  `)).toBe(
        true,
      )
    })
  })

  it('leaves one error listener on stdout however many commands run in the process', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    await cli(['token', 'list', '--database-url', url])
    const before = process.stdout.listenerCount('error')
    for (let i = 0; i < 12; i++) await cli(['token', 'list', '--database-url', url])
    expect(process.stdout.listenerCount('error')).toBe(before)
  })

  it('refuses bad scopes, names and lifetimes with exit code 2', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    for (const args of [
      ['--scopes', 'plants:everything'],
      ['--name', ' '],
      ['--expires-in', 'soon'],
      // Expired before anyone could use it.
      ['--expires-in', '1ms'],
      ['--expires-in', '999ms'],
    ]) {
      const res = await cli(['token', 'create', '--name', 'x', ...args, '--database-url', url])
      expect(res.code).toBe(2)
      expect(res.stderr).toMatch(/^plantstore: invalid --/)
    }
    expect(
      (await cli(['token', 'create', '--name', 'x', '--expires-in', '1000ms', '--database-url', url])).code,
    ).toBe(0)
  })

  it('refuses a token given as the name, so that token list never shows its secret', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const token = (await cli(['token', 'create', '--name', 'ci', '--database-url', url])).stdout.trim()
    const res = await cli(['token', 'create', '--name', `deploy ${token}`, '--database-url', url])
    expect(res.code).toBe(2)
    expect(res.stdout).toBe('')
    expect(res.stderr).toBe(
      'plantstore: invalid --name: it holds a token; name what the token is for instead\n',
    )
    const listed = await cli(['token', 'list', '--database-url', url])
    expect(listed.stdout).not.toContain(token.slice(21))
    expect(listed.stdout.trim().split('\n')).toHaveLength(2)
  })

  it('issues no token into sqlite::memory:, where it would be lost when the command exits', async () => {
    for (const env of [false, true]) {
      const args = env ? [] : ['--database-url', 'sqlite::memory:']
      vi.stubEnv('DATABASE_URL', env ? 'sqlite::memory:' : undefined)
      try {
        const res = await cli(['token', 'create', '--name', 'lost', ...args])
        expect(res.code).toBe(2)
        expect(res.stdout).toBe('')
        expect(res.stderr).toMatch(/^plantstore: token create cannot issue into sqlite::memory:/)
      } finally {
        vi.unstubAllEnvs()
      }
    }
  })

  it('refuses a SQLite file that does not exist for the commands that only read or change one, creating nothing', async () => {
    const dir = tempDir()
    const path = join(dir, 'typo', 'plantstore.db')
    const url = ['--database-url', `sqlite:${path}`]
    for (const args of [
      ['token', 'list'],
      ['token', 'revoke', 'abcdef0123456789'],
      ['export'],
      ['backup', join(dir, 'b.db')],
    ]) {
      const res = await cli([...args, ...url])
      expect(res.code, args.join(' ')).toBe(1)
      expect(res.stdout).toBe('')
      expect(res.stderr).toBe(
        `plantstore: no database at ${path}; this command creates none (\`plantstore migrate\` or \`token create\` does)\n`,
      )
    }
    expect(readdirSync(dir)).toEqual([])
    // Creating a token is how a database is begun, so that one still creates the file.
    expect((await cli(['token', 'create', '--name', 'first', ...url])).code).toBe(0)
    expect((await cli(['token', 'list', ...url])).stdout).toContain('first')
  })

  it('issues tokens an app on the same database accepts', async () => {
    const t = await makeApp({
      name: 'sqlite',
      freshUrl: async () => `sqlite:${join(tempDir(), 'shared.db')}`,
    })
    const token = (await cli(['token', 'create', '--name', 'app', '--database-url', t.url])).stdout.trim()
    const res = await t.app.inject({
      method: 'GET',
      url: '/plants',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.statusCode).toBe(200)
    await t.close()
  })

  it("stores only the SHA-256 of a token's secret, never the secret itself", async () => {
    const path = join(tempDir(), 'p.db')
    const token = (
      await cli(['token', 'create', '--name', 'kept', '--database-url', `sqlite:${path}`])
    ).stdout.trim()
    const [, id, secret] = /^pst_([0-9a-f]{16})_(.+)$/.exec(token) ?? []
    const db = new Database(path, { readonly: true })
    const row = db.prepare('SELECT * FROM tokens WHERE id = ?').get(id) as Record<string, unknown>
    db.close()
    expect(row.secret_hash).toBe(
      createHash('sha256')
        .update(secret ?? '')
        .digest('hex'),
    )
    for (const value of Object.values(row)) expect(String(value)).not.toContain(secret)
    // Nor anywhere in the database's files, its log included.
    const dir = dirname(path)
    for (const file of readdirSync(dir))
      expect(readFileSync(join(dir, file)).includes(secret ?? '')).toBe(false)
  })

  it('rolls a token: prints the new secret as create does, and the old one works for the overlap', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const t = await makeApp({ name: 'sqlite', freshUrl: async () => url })
    try {
      const list = (token: string) =>
        t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } })
      const old = (await cli(['token', 'create', '--name', 'app', '--database-url', url])).stdout.trim()
      const id = old.slice(4, 20)
      expect((await list(old)).statusCode).toBe(200)

      const rolled = await cli(['token', 'roll', id, '--overlap', '1h', '--database-url', url])
      expect([rolled.code, rolled.stderr]).toEqual([0, ''])
      const fresh = rolled.stdout.trim()
      expect(rolled.stdout).toBe(`${fresh}\n`)
      expect(fresh).toMatch(new RegExp(`^pst_${id}_[A-Za-z0-9_-]{43}$`))
      expect((await list(fresh)).statusCode).toBe(200)
      expect((await list(old)).statusCode).toBe(200)
      const [row] = JSON.parse((await cli(['token', 'list', '--json', '--database-url', url])).stdout)
      const until = Date.parse(row.previousSecretExpiresAt)
      expect(until - Date.now()).toBeGreaterThan(3_500_000)
      expect(until - Date.now()).toBeLessThanOrEqual(3_600_000)
      const table = (await cli(['token', 'list', '--database-url', url])).stdout
      expect(table).toMatch(/^ID .* RATE LIMIT +OLD SECRET UNTIL +STATUS\n/)
      expect(table).toMatch(new RegExp(` +- +${row.previousSecretExpiresAt} +active\\n$`))

      // By the whole token too; with no overlap the secret before stops at once.
      const again = await cli(['token', 'roll', fresh, '--overlap', '0s', '--database-url', url])
      expect(again.code).toBe(0)
      // The command ran in this process without a turn of the event loop, and a server looks at the
      // revocation epoch once a turn: the next turn's request sees the roll.
      await new Promise((resolve) => setImmediate(resolve))
      expect((await list(fresh)).statusCode).toBe(401)
      expect((await list(again.stdout.trim())).statusCode).toBe(200)
      const [after] = JSON.parse((await cli(['token', 'list', '--json', '--database-url', url])).stdout)
      expect(after.previousSecretExpiresAt).toBeNull()
    } finally {
      await t.close()
    }
  })

  it('rolls no unknown, revoked or expired token, and takes no bad overlap', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const token = (await cli(['token', 'create', '--name', 'x', '--database-url', url])).stdout.trim()
    const id = token.slice(4, 20)
    for (const overlap of ['forever', '31d', '-1s']) {
      const res = await cli(['token', 'roll', id, '--overlap', overlap, '--database-url', url])
      expect([res.code, res.stdout]).toEqual([2, ''])
      expect(res.stderr).toBe(
        `plantstore: invalid --overlap ${JSON.stringify(overlap)}: expected a duration such as 0s, 1h, 24h, at most 30d\n`,
      )
    }
    const unknown = await cli(['token', 'roll', 'ffffffffffffffff', '--database-url', url])
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'no token with id ffffffffffffffff\n' })
    // Something that is no id at all is not quoted back: it may be most of a secret.
    const notAnId = await cli(['token', 'roll', 'Zm9vYmFyYmF6cXV4', '--database-url', url])
    expect(notAnId).toEqual({
      code: 1,
      stdout: '',
      stderr: 'no token with that id: an id is the 16 hex digits `token list` shows\n',
    })
    expect((await cli(['token', 'revoke', id, '--database-url', url])).code).toBe(0)
    const revoked = await cli(['token', 'roll', id, '--database-url', url])
    expect(revoked).toEqual({
      code: 1,
      stdout: '',
      stderr: `token ${id} is revoked or expired: it cannot be rolled; issue a new one\n`,
    })
  })

  it('rolls nothing when standard output is closed or /dev/null, where nobody would receive the secret', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const token = (await cli(['token', 'create', '--name', 'kept', '--database-url', url])).stdout.trim()
    const id = token.slice(4, 20)
    const hash = async () => {
      const t = await makeApp({ name: 'sqlite', freshUrl: async () => url })
      try {
        return (await t.store.tokens.find(id))?.secretHash
      } finally {
        await t.close()
      }
    }
    const before = await hash()
    for (const redirect of ['>&-', '>/dev/null']) {
      const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(
          'sh',
          ['-c', `exec "$0" token roll "$1" --database-url "$2" ${redirect}`, BIN, id, url],
          { cwd: ROOT, timeout: 30_000 },
          (error, _stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr }),
        )
      })
      expect([redirect, code]).toEqual([redirect, 1])
      expect(stderr).toMatch(
        /^plantstore: cannot write the token to standard output \(it is closed or \/dev\/null, where nobody would receive it\); the token was not rolled\n$/,
      )
    }
    expect(await hash()).toBe(before)
  })

  it('issues a token with its own rate limit, shown by token list, and refuses a bad one', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const created = await cli([
      'token',
      'create',
      '--name',
      'slow',
      '--rate-limit',
      '100/60s',
      '--database-url',
      url,
    ])
    expect(created.code).toBe(0)
    const [row] = JSON.parse((await cli(['token', 'list', '--json', '--database-url', url])).stdout)
    expect(row).toMatchObject({ name: 'slow', rateLimit: '100/1m', previousSecretExpiresAt: null })
    expect((await cli(['token', 'list', '--database-url', url])).stdout).toMatch(/ +100\/1m +- +active\n$/)
    for (const limit of ['lots', '0/1s', '5/25d']) {
      const res = await cli(['token', 'create', '--name', 'x', '--rate-limit', limit, '--database-url', url])
      expect([res.code, res.stdout]).toEqual([2, ''])
      expect(res.stderr).toBe(
        `plantstore: invalid --rate-limit ${JSON.stringify(limit)}: expected COUNT/WINDOW such as 100/1s or 6000/1m (a window of at most 24d)\n`,
      )
    }
    // The same words as POST /tokens gives, said of the flag instead of the field.
    const scopes = await cli([
      'token',
      'create',
      '--name',
      'x',
      '--scopes',
      'plants:all',
      '--database-url',
      url,
    ])
    expect(scopes.stderr).toBe(
      'plantstore: invalid --scopes "plants:all": expected a list of one or more of plants:read, plants:write, webhooks:manage, metrics:read, tokens:manage, events:read\n',
    )
  })

  it('says what became of a rolled token whose new secret standard output did not take', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const ids: string[] = []
    for (const name of ['kept', 'lost']) {
      ids.push((await cli(['token', 'create', '--name', name, '--database-url', url])).stdout.slice(4, 20))
    }
    const rollFailing = async (id: string, overlap: string) => {
      const args = ['token', 'roll', id, '--overlap', overlap, '--database-url', url]
      const { code, stderr } = await runHere(args, {}, { stdoutFails: 'EPIPE' })
      expect(code).toBe(1)
      return stderr
    }
    // With an overlap, the previous secret still works: whoever holds it can roll again.
    expect(await rollFailing(ids[0] as string, '1h')).toMatch(
      /^plantstore: cannot write the token to standard output \(EPIPE\); token [0-9a-f]{16} was rolled, its previous secret works until \S+Z: roll it again\n$/,
    )
    // Without one, nobody holds a working secret: the token is revoked, as create does.
    expect(await rollFailing(ids[1] as string, '0s')).toMatch(
      /^plantstore: cannot write the token to standard output \(EPIPE\); token [0-9a-f]{16} was rolled and then revoked, issue another\n$/,
    )
    const listed = JSON.parse((await cli(['token', 'list', '--json', '--database-url', url])).stdout)
    expect(listed.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
      ['kept', 'active'],
      ['lost', 'revoked'],
    ])
  })
})
