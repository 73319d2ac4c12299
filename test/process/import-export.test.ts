import { execFileSync, spawn } from 'node:child_process'
import { lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { BIN, exitCode, ROOT, runCli, runCliWithFileLimit } from '../helpers/process.js'
import { storeKinds, tempDir } from '../helpers/stores.js'

describe.each(storeKinds)('plantstore import and export on $name', (kind) => {
  const write = (name: string, text: string | Buffer) => {
    const file = join(tempDir(), name)
    writeFileSync(file, text)
    return file
  }

  it('refuses a named pipe or /dev/stdout (a link) as --output with exit 1 and one line; - is standard output', async () => {
    const db = await kind.freshUrl()
    const plants = '{"id":1,"name":"a"}\n{"id":2,"name":"b","tag":"t"}\n'
    expect((await runCli(['import', write('p.jsonl', plants), '--database-url', db])).code).toBe(0)
    const dir = tempDir()
    const fifo = join(dir, 'plants.fifo')
    execFileSync('mkfifo', [fifo])
    // /dev/stdout as it is made, a link to the process's own stdout: one in /dev itself would be
    // the same for every program.
    const stdout = join(dir, 'stdout')
    symlinkSync('/proc/self/fd/1', stdout)
    for (const [output, what] of [
      [fifo, 'a named pipe'],
      [stdout, 'a symbolic link'],
    ] as const) {
      expect(await runCli(['export', '--output', output, '--database-url', db])).toEqual({
        code: 1,
        stdout: '',
        stderr: `plantstore: cannot write ${output}: it is ${what}, which is never written through; name a regular file\n`,
      })
    }
    expect(statSync(fifo).isFIFO()).toBe(true)
    expect(lstatSync(stdout).isSymbolicLink()).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['plants.fifo', 'stdout'])
    expect(await runCli(['export', '--output', '-', '--database-url', db])).toEqual({
      code: 0,
      stdout: plants,
      stderr: 'exported 2 plants\n',
    })
  })

  it('prints plain progress lines when not on a terminal', async () => {
    const db = await kind.freshUrl()
    const lines = Array.from({ length: 5000 }, (_, i) => `{"id": ${i}, "name": "p${i}"}`).join('\n')
    const result = await runCli([
      'import',
      write('many.jsonl', lines),
      '--batch-size',
      '100',
      '--database-url',
      db,
    ])
    expect(result.code).toBe(0)
    expect(result.stderr).not.toContain('\r')
    expect(result.stderr).toMatch(/^import done in [\d.]+s: 5,000 lines \(5,000 created/m)
  })

  it('imports standard input given as -, with --format: an export piped into another database', async () => {
    const from = await kind.freshUrl()
    const lines = ['{"id":9223372036854775807,"name":"max","tag":"t"}', '{"id":-1,"name":"minus one"}']
    const source = join(tempDir(), 'source.jsonl')
    writeFileSync(source, `${lines.join('\n')}\n`)
    expect((await runCli(['import', source, '--database-url', from])).code).toBe(0)
    const exported = await runCli(['export', '--database-url', from])

    const to = await kind.freshUrl()
    const piped = await runCli(
      ['import', '-', '--format', 'jsonl', '--database-url', to],
      {},
      exported.stdout,
    )
    expect(piped.code).toBe(0)
    expect(piped.stderr).toMatch(/2 created, 0 unchanged, 0 rejected/)
    expect((await runCli(['export', '--database-url', to])).stdout).toBe(exported.stdout)

    const csv = await runCli(
      ['import', '-', '--format', 'csv', '--database-url', to],
      {},
      'id,name\n5,five\n',
    )
    expect(csv.stderr).toMatch(/1 created/)
    const guessed = await runCli(['import', '-', '--database-url', to], {}, exported.stdout)
    expect(guessed.code).toBe(2)
    expect(guessed.stderr).toBe('plantstore: standard input has no extension: pass --format jsonl or csv\n')
  })

  it('reads a byte order mark that standard input delivers in pieces as the mark, not as text', async () => {
    const url = await kind.freshUrl()
    const child = spawn(BIN, ['import', '-', '--format', 'jsonl', '--database-url', url], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = exitCode(child)
    // A producer writing as it goes: the mark's first byte reaches the pipe alone, and is read alone
    // if the command is reading by then (it may still be loading: test/cli/import-in-process.test.ts
    // hands the command its input in pieces for certain).
    child.stdin.write(Buffer.from([0xef]))
    await sleep(300)
    child.stdin.end(Buffer.concat([Buffer.from([0xbb, 0xbf]), Buffer.from('{"id":7,"name":"seven"}\n')]))
    const code = await exited
    expect(stderr).toMatch(/1 created, 0 unchanged, 0 rejected/)
    expect(code).toBe(0)
    expect((await runCli(['export', '--database-url', url])).stdout).toBe('{"id":7,"name":"seven"}\n')
  })
})

describe('plantstore import (SQLite) when the database cannot grow', () => {
  it('names the database file, exits 1, and a re-run once there is room imports the rest', async () => {
    const dir = tempDir()
    const db = join(dir, 'full.db')
    const url = `sqlite:${db}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const lines = Array.from({ length: 5000 }, (_, i) =>
      JSON.stringify({ id: i + 1, name: `plant number ${i + 1}` }),
    )
    const file = join(dir, 'plants.jsonl')
    writeFileSync(file, `${lines.join('\n')}\n`)
    // A limit on the size of any file this process writes stands for a disk that fills up midway.
    const full = await runCliWithFileLimit(256, [
      'import',
      file,
      '--batch-size',
      '500',
      '--database-url',
      url,
    ])
    expect(full.code).toBe(1)
    expect(full.stderr.trim().split('\n').at(-1)).toBe(`plantstore: cannot write to ${db} (disk I/O error)`)

    const retried = await runCli(['import', file, '--database-url', url])
    expect(retried.code).toBe(0)
    expect(retried.stderr).toMatch(/0 rejected/)
    expect((await runCli(['export', '--database-url', url])).stdout.split('\n').length - 1).toBe(5000)
  })
})

describe('plantstore export when the disk fills up', () => {
  it('names the output, exits 1, and leaves neither it nor the copy beside it', async () => {
    const dir = tempDir()
    const url = `sqlite:${join(dir, 'p.db')}`
    const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: i, name: `plant ${i}` }))
    const file = join(dir, 'p.jsonl')
    writeFileSync(file, `${lines.join('\n')}\n`)
    expect((await runCli(['import', file, '--database-url', url])).code).toBe(0)
    const out = join(dir, 'out', 'plants.jsonl')
    mkdirSync(dirname(out))
    // 64 blocks of 512 bytes: far less than the export's 100 KB.
    const full = await runCliWithFileLimit(64, ['export', '--output', out, '--database-url', url])
    expect(full.code).toBe(1)
    expect(full.stderr).toMatch(new RegExp(`^plantstore: cannot write ${out}: .*\\n$`))
    expect(full.stderr.trim().split('\n')).toHaveLength(1)
    expect(readdirSync(dirname(out))).toEqual([])
  })
})
