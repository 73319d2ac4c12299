import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runHere } from '../helpers/cli.js'
import { storeKinds, tempDir } from '../helpers/stores.js'

// The import and export commands on files, each run through the CLI's entry point in this process
// (runHere): what they read, write, print and exit with. What needs a process of its own (standard
// input, pipes, a terminal, a full disk) is in test/process/import-export.test.ts.
describe.each(storeKinds)('plantstore import and export on $name', (kind) => {
  const write = (name: string, text: string | Buffer) => {
    const file = join(tempDir(), name)
    writeFileSync(file, text)
    return file
  }

  it('imports JSON Lines, reports each rejected line with its number and exits 1', async () => {
    const db = await kind.freshUrl()
    const file = write(
      'plants.jsonl',
      [
        '{"id": 9223372036854775807, "name": "max", "tag": "edge"}',
        '{"id": 1.5, "name": "fraction"}',
        '',
        'not json',
        '{"id": -9223372036854775808, "name": "min"}',
        '{"id": 3, "name": ""}',
        '{"id": 4, "name": "four"}',
      ].join('\n'),
    )
    const result = await runHere(['import', file, '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^line 2: 40005 /),
      expect.stringMatching(/^line 4: 40002 The request body is not valid JSON: /),
      expect.stringMatching(/^line 6: 40007 /),
    ])
    expect(result.stderr).toMatch(/3 created, 0 unchanged, 3 rejected/)

    const exported = await runHere(['export', '--database-url', db])
    expect(exported.code).toBe(0)
    expect(exported.stdout).toBe(
      [
        '{"id":-9223372036854775808,"name":"min"}',
        '{"id":4,"name":"four"}',
        '{"id":9223372036854775807,"name":"max","tag":"edge"}',
        '',
      ].join('\n'),
    )
  })

  it('is idempotent on re-run and rejects a different plant under an existing id', async () => {
    const db = await kind.freshUrl()
    const file = write('plants.ndjson', '{"id": 1, "name": "a"}\n{"id": 2, "name": "b", "tag": "t"}\n')
    expect((await runHere(['import', file, '--database-url', db])).code).toBe(0)
    const again = await runHere(['import', file, '--database-url', db])
    expect(again.code).toBe(0)
    expect(again.stderr).toMatch(/0 created, 2 unchanged, 0 rejected/)
    const changed = write('changed.jsonl', '{"id": 2, "name": "b", "tag": "other"}\n')
    const conflict = await runHere(['import', changed, '--database-url', db])
    expect(conflict.code).toBe(1)
    expect(conflict.stdout).toBe('line 1: a different plant with id 2 already exists\n')
    expect((await runHere(['export', '--database-url', db])).stdout).toContain(
      '{"id":2,"name":"b","tag":"t"}',
    )
  })

  it('stores the first of the lines that share an id in one batch, whatever order the ids come in', async () => {
    const db = await kind.freshUrl()
    // Ids out of order and each repeated under other names: the batch's rows are sorted by id before
    // they are inserted, and a sort that does not keep the lines' order among equal ids stored a
    // later line while reporting the first as created and the stored one as the conflict.
    const ids = Array.from({ length: 300 }, (_, i) => (i * 7919) % 300)
    const lines = [0, 1, 2].flatMap((v) => ids.map((id) => JSON.stringify({ id, name: `${id}-${v}` })))
    const result = await runHere([
      'import',
      write('plants.jsonl', `${lines.join('\n')}\n`),
      '--database-url',
      db,
    ])
    expect(result.stderr).toMatch(/300 created, 0 unchanged, 600 rejected/)
    const exported = await runHere(['export', '--database-url', db])
    const names = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).name as string)
    expect(names).toEqual(ids.toSorted((a, b) => a - b).map((id) => `${id}-0`))
  })

  it('imports CSV with a header, quoted fields and empty tags, ids exact', async () => {
    const db = await kind.freshUrl()
    const file = write(
      'plants.csv',
      'name,id,tag\r\n"Monstera, ""deliciosa""",9007199254740993,aroid\r\nFern,-5,\r\nBad,1e3,x\r\n',
    )
    const result = await runHere(['import', file, '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^line 4: 40005 /)
    const out = join(tempDir(), 'export.jsonl')
    expect((await runHere(['export', '--output', out, '--database-url', db])).code).toBe(0)
    expect(readFileSync(out, 'utf8')).toBe(
      '{"id":-5,"name":"Fern"}\n{"id":9007199254740993,"name":"Monstera, \\"deliciosa\\"","tag":"aroid"}\n',
    )
    expect(readdirSync(dirname(out))).toEqual(['export.jsonl'])
    // A second export replaces the first, whole: nothing of the older file is left.
    writeFileSync(out, 'older export, longer than the new one: '.repeat(10))
    expect((await runHere(['export', '--output', out, '--database-url', db])).code).toBe(0)
    expect(readFileSync(out, 'utf8')).toBe(
      '{"id":-5,"name":"Fern"}\n{"id":9007199254740993,"name":"Monstera, \\"deliciosa\\"","tag":"aroid"}\n',
    )
  })

  it('names the output, not the file written beside it, when the output cannot be written', async () => {
    const db = await kind.freshUrl()
    expect((await runHere(['migrate', '--database-url', db])).code).toBe(0)
    const out = join(tempDir(), 'missing', 'export.jsonl')
    const result = await runHere(['export', '--output', out, '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(`plantstore: cannot write ${out}: its folder does not exist\n`)
  })

  it('refuses a folder as the output, with or without a final slash, and writes nothing into it', async () => {
    const db = await kind.freshUrl()
    const folder = tempDir()
    for (const out of [folder, `${folder}/`]) {
      const result = await runHere(['export', '--output', out, '--database-url', db])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(`plantstore: cannot write ${out}: it is a folder; name a file in it\n`)
    }
    expect(readdirSync(folder)).toEqual([])
  })

  it('counts the plants it exported on stderr, one plant in the singular', async () => {
    const db = await kind.freshUrl()
    expect((await runHere(['migrate', '--database-url', db])).code).toBe(0)
    expect((await runHere(['export', '--database-url', db])).stderr).toBe('exported 0 plants\n')
    expect(
      (await runHere(['import', write('one.jsonl', '{"id":1,"name":"a"}\n'), '--database-url', db])).code,
    ).toBe(0)
    expect(await runHere(['export', '--database-url', db])).toEqual({
      code: 0,
      stdout: '{"id":1,"name":"a"}\n',
      stderr: 'exported 1 plant\n',
    })
  })

  it('rejects a CSV record with more fields than the header names, rather than shifting them', async () => {
    const db = await kind.freshUrl()
    const file = write(
      'plants.csv',
      'id,name,tag\n1,Monstera, deliciosa,aroid\n2,"Monstera, deliciosa",aroid\n',
    )
    const result = await runHere(['import', file, '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe(
      'line 2: 4 fields where the header names 3 columns (quote a field that holds a comma)\n',
    )
    expect((await runHere(['export', '--database-url', db])).stdout).toBe(
      '{"id":2,"name":"Monstera, deliciosa","tag":"aroid"}\n',
    )
  })

  it('refuses a CSV file whose lines end in CR alone, instead of reading it as one header and importing nothing', async () => {
    const db = await kind.freshUrl()
    const file = write('mac.csv', 'id,name,tag\r1,Monstera,aroid\r2,Fern,\r')
    const result = await runHere(['import', file, '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^plantstore: line 1: .*lines end in CR alone/)
    // The same records with CRLF line endings import.
    const crlf = write('windows.csv', 'id,name,tag\r\n1,Monstera,aroid\r\n2,Fern,\r\n')
    expect((await runHere(['import', crlf, '--database-url', db])).code).toBe(0)
    expect((await runHere(['export', '--database-url', db])).stdout).toBe(
      '{"id":1,"name":"Monstera","tag":"aroid"}\n{"id":2,"name":"Fern"}\n',
    )
  })

  it('writes outbox events only with --emit-events', async () => {
    const db = await kind.freshUrl()
    const quiet = write('quiet.jsonl', '{"id": 1, "name": "a"}\n')
    const loud = write('loud.jsonl', '{"id": 2, "name": "b", "tag": "t"}\n{"id": 1, "name": "a"}\n')
    expect((await runHere(['import', quiet, '--database-url', db])).code).toBe(0)
    expect((await runHere(['import', loud, '--emit-events', '--database-url', db])).code).toBe(0)
    const { openStore, parseDatabaseUrl } = await import('../../src/store/open.js')
    const store = await openStore(parseDatabaseUrl(db) as NonNullable<ReturnType<typeof parseDatabaseUrl>>)
    try {
      const events = await store.events.listSince(0, 10)
      // Only the plant that was created gets an event; the unchanged one does not.
      expect(events).toHaveLength(1)
      expect(events[0]?.type).toBe('plant.created')
      expect(JSON.parse(events[0]?.payload as string).data).toEqual({ id: 2, name: 'b', tag: 't' })
    } finally {
      await store.close()
    }
  })

  it('records the changes it makes with --emit-events as made by the import command, with no request', async () => {
    const db = await kind.freshUrl()
    const file = write('plants.jsonl', '{"id": 9223372036854775807, "name": "max"}\n')
    expect((await runHere(['import', file, '--emit-events', '--database-url', db])).code).toBe(0)
    const { openStore, parseDatabaseUrl } = await import('../../src/store/open.js')
    const { buildApp } = await import('../../src/app.js')
    const { TokenService } = await import('../../src/tokens/service.js')
    const store = await openStore(parseDatabaseUrl(db) as NonNullable<ReturnType<typeof parseDatabaseUrl>>)
    const tokens = new TokenService(store.tokens)
    const app = await buildApp({ store, tokens })
    try {
      const { token } = await tokens.create('reader', ['plants:read'])
      const res = await app.inject({
        method: 'GET',
        url: '/plants/9223372036854775807/history',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode).toBe(200)
      expect(res.body).toMatch(
        /^\{"data":\[\{"cursor":"\d+","type":"plant\.created","time":"[^"]+","actor":\{"cli":"import"\},"requestId":null,"before":null,"after":\{"id":9223372036854775807,"name":"max"\}\}\]\}$/,
      )
    } finally {
      await app.close()
      await store.close()
    }
  })

  it('rejects a line larger than --body-limit (64kb by default) with 41301, as POST /plants would', async () => {
    const db = await kind.freshUrl()
    const padded = (id: number, bytes: number) => {
      const head = `{"id": ${id}, "name": "n", "pad": "`
      return `${head}${'x'.repeat(bytes - head.length - 2)}"}`
    }
    const file = write('padded.jsonl', `${padded(1, 65_536)}\n${padded(2, 65_537)}\n${padded(3, 1000)}\n`)
    const byDefault = await runHere(['import', file, '--database-url', db])
    expect(byDefault.code).toBe(1)
    expect(byDefault.stdout).toBe('line 2: 41301 The request body is too large.\n')
    expect(byDefault.stderr).toMatch(/2 created, 0 unchanged, 1 rejected/)

    const smaller = await runHere(['import', file, '--body-limit', '1kb', '--database-url', db])
    expect(smaller.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^line 1: 41301 /),
      expect.stringMatching(/^line 2: 41301 /),
    ])
    expect(smaller.stderr).toMatch(/0 created, 1 unchanged, 2 rejected/)

    const fromEnv = await runHere(['import', file, '--database-url', db], { BODY_LIMIT: '999' })
    expect(fromEnv.stdout.trim().split('\n')).toHaveLength(3)
    const invalid = await runHere(['import', file, '--body-limit', 'huge', '--database-url', db])
    expect(invalid.code).toBe(2)
    expect(invalid.stderr).toMatch(/invalid --body-limit \(BODY_LIMIT\)/)
  })

  it.each([
    ['plants.jsonl', '{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n'],
    ['plants.csv', 'id,name\n1,a\n2,b\n'],
  ])('reads %s that starts with a UTF-8 byte order mark', async (name, text) => {
    const db = await kind.freshUrl()
    const result = await runHere(['import', write(name, `\uFEFF${text}`), '--database-url', db])
    expect(result.stdout).toBe('')
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/2 created, 0 unchanged, 0 rejected/)
  })

  it.each([
    ['plants.jsonl', (name: string) => `{"id": 1, "name": "${name}"}`, ''],
    ['plants.csv', (name: string) => `1,${name}`, 'id,name\n'],
  ])(
    'rejects a line of %s whose bytes are not UTF-8 with 40002, as POST /plants would',
    async (file, line, header) => {
      const db = await kind.freshUrl()
      const latin1 = Buffer.concat([
        Buffer.from(`${header}${line('caf')}`),
        Buffer.from([0xe9]),
        Buffer.from('\r\n'),
      ])
      const valid = Buffer.from(line('café').replace('1', '2'))
      const result = await runHere([
        'import',
        write(file, Buffer.concat([latin1, valid])),
        '--database-url',
        db,
      ])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe(`line ${header ? 2 : 1}: 40002 The request body is not valid UTF-8.\n`)
      expect(result.stderr).toMatch(/1 created, 0 unchanged, 1 rejected/)
      expect((await runHere(['export', '--database-url', db])).stdout).toBe('{"id":2,"name":"café"}\n')
    },
  )

  it('rejects a quoted CSV field with a line that is not UTF-8 once, never reading the rest of it as records', async () => {
    const db = await kind.freshUrl()
    const notUtf8 = (text: string) => Buffer.concat([Buffer.from(text), Buffer.from([0xff])])
    const csv = Buffer.concat([
      Buffer.from('id,name,tag\n1,"a name that goes on\n'),
      notUtf8('past a line that is not UTF-8'),
      Buffer.from('\n2,within the field,x"\n3,between,\n'),
      notUtf8('4,"opened on a line that is not UTF-8 '),
      Buffer.from('\n5,still the field,y",t\n6,after,\n'),
    ])
    const result = await runHere(['import', write('plants.csv', csv), '--database-url', db])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe(
      'line 2: 40002 The request body is not valid UTF-8.\nline 6: 40002 The request body is not valid UTF-8.\n',
    )
    expect(result.stderr).toMatch(/2 created, 0 unchanged, 2 rejected/)
    expect((await runHere(['export', '--database-url', db])).stdout).toBe(
      '{"id":3,"name":"between"}\n{"id":6,"name":"after"}\n',
    )
  })

  it('holds a JSON line to the body limit in bytes, CRLF or not, without reading a longer one whole', async () => {
    const db = await kind.freshUrl()
    const padded = (id: number, bytes: number) => {
      const head = `{"id": ${id}, "name": "n", "pad": "`
      return `${head}${'x'.repeat(bytes - head.length - 2)}"}`
    }
    // The CR of a line at the limit is not the body's; a line of megabytes with no newline at all,
    // the last in the file, is refused all the same.
    const text = `${padded(1, 1024)}\r\n${padded(2, 1025)}\r\n${padded(3, 100)}\n${padded(4, 3_000_000)}`
    const result = await runHere([
      'import',
      write('long.jsonl', text),
      '--body-limit',
      '1kb',
      '--database-url',
      db,
    ])
    expect(result.stdout.trim().split('\n')).toEqual([
      'line 2: 41301 The request body is too large.',
      'line 4: 41301 The request body is too large.',
    ])
    expect(result.stderr).toMatch(/2 created, 0 unchanged, 2 rejected/)
  })

  it('exits 1 for a file that cannot be read', async () => {
    const result = await runHere([
      'import',
      join(tempDir(), 'absent.jsonl'),
      '--database-url',
      await kind.freshUrl(),
    ])
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('cannot read')])
  })

  it('exits 1 naming the file when it is a directory', async () => {
    const folder = join(tempDir(), 'catalogue.jsonl')
    mkdirSync(folder)
    const result = await runHere(['import', folder, '--database-url', await kind.freshUrl()])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(`plantstore: cannot read ${folder}: it is a directory\n`)
  })
})
