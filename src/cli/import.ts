import { createReadStream, statSync } from 'node:fs'
import { extname } from 'node:path'
import { ConfigError, SERVE_SETTINGS } from '../config.js'
import { IMPORT_CONTEXT, plantEvent } from '../plants/events.js'
import {
  CR_ALONE,
  type CsvColumns,
  csvColumns,
  endsInQuotedField,
  type ImportFormat,
  lineText,
  plantFromCsvRecord,
  plantFromJsonLine,
  RejectedLine,
  UnterminatedField,
} from '../plants/import-line.js'
import { openStore } from '../store/open.js'
import type { ImportItem } from '../store/types.js'
import { currentTraceparent, endSpan, inSpan, startSpan } from '../tracing/active.js'
import { type CliDatabaseOptions, withStore } from './database.js'
import { type ImportProgress, ProgressReporter } from './progress.js'

export interface ImportOptions extends CliDatabaseOptions {
  format?: string
  emitEvents?: boolean
  batchSize?: string
  bodyLimit?: string
}

const FORMAT_BY_EXTENSION: Record<string, ImportFormat> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'jsonl',
  '.csv': 'csv',
}

/** The file name that means standard input, as for most command-line tools. */
export const STDIN = '-'

export function importFormat(file: string, flag: string | undefined): ImportFormat {
  if (flag !== undefined) {
    if (flag === 'jsonl' || flag === 'csv') return flag
    throw new ConfigError(`invalid --format ${JSON.stringify(flag)}: expected jsonl or csv`)
  }
  if (file === STDIN) throw new ConfigError('standard input has no extension: pass --format jsonl or csv')
  const format = FORMAT_BY_EXTENSION[extname(file).toLowerCase()]
  if (!format) {
    throw new ConfigError(`cannot tell the format of ${file} from its extension: pass --format jsonl or csv`)
  }
  return format
}

function batchSize(raw: string | undefined): number {
  if (raw === undefined) return 2000
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : 0
  if (n < 1 || n > 100_000)
    throw new ConfigError(`invalid --batch-size ${JSON.stringify(raw)}: expected 1 to 100000`)
  return n
}

/** The body limit a JSON line is held to: serve's, read from the same flag, env and default. */
function bodyLimit(raw: string | undefined): number {
  const setting = SERVE_SETTINGS.find((s) => s.key === 'bodyLimit') as (typeof SERVE_SETTINGS)[number]
  return setting.parse(raw ?? process.env.BODY_LIMIT ?? (setting.default as string)) as number
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * The lines of a file as bytes, read as a stream: memory stays bounded whatever the file's size. A
 * line is split before it is decoded, so that each is checked as UTF-8 on its own, as a body would
 * be. Of a line longer than `maxLineBytes` only the first `maxLineBytes + 1` bytes are kept: enough
 * to refuse it as too long without holding it whole.
 */
async function* linesOf(
  file: string,
  maxLineBytes: number,
  onBytes: (bytes: number) => void,
): AsyncGenerator<Buffer> {
  const stream = file === STDIN ? process.stdin : createReadStream(file, { highWaterMark: 1 << 20 })
  let read = 0
  let pieces: Buffer[] = []
  let kept = 0
  /** Bytes of the line were dropped: it is longer than anything kept, a final CR or not. */
  let cut = false
  const take = (piece: Buffer) => {
    const room = maxLineBytes + 1 - kept
    if (piece.length > room) cut = true
    if (room <= 0) return
    const part = piece.length > room ? piece.subarray(0, room) : piece
    pieces.push(part)
    kept += part.length
  }
  const line = () => {
    const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces)
    const whole = !cut
    pieces = []
    kept = 0
    cut = false
    return whole && bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes
  }
  /**
   * The bytes read so far while too few to tell whether they begin with a byte order mark: a pipe may
   * deliver the mark in pieces, where a file's first read holds it whole.
   */
  let head: Buffer | undefined = Buffer.alloc(0)
  for await (const piece of stream as AsyncIterable<Buffer>) {
    read += piece.length
    onBytes(read)
    let chunk = piece
    let start = 0
    if (head !== undefined) {
      chunk = head.length === 0 ? piece : Buffer.concat([head, piece])
      if (chunk.length < UTF8_BOM.length && UTF8_BOM.subarray(0, chunk.length).equals(chunk)) {
        head = chunk
        continue
      }
      head = undefined
      // A byte order mark marks the file's encoding (editors on Windows write one); it belongs to no
      // line, so the first is read as the text after it, in JSON Lines as in CSV.
      if (chunk.subarray(0, 3).equals(UTF8_BOM)) start = 3
    }
    for (let end = chunk.indexOf(0x0a, start); end !== -1; end = chunk.indexOf(0x0a, start)) {
      take(chunk.subarray(start, end))
      yield line()
      start = end + 1
    }
    take(chunk.subarray(start))
  }
  // Input that ended within what could have been a mark is a line of its own, as any other bytes.
  if (head !== undefined) take(head)
  if (kept > 0 || cut) yield line()
}

/** The size of a file to import, checked before the database is opened. */
function readableSize(file: string): number {
  try {
    const stats = statSync(file)
    // Its read would fail only once the database is open, as a bare EISDIR naming no file.
    if (stats.isDirectory()) throw new Error('it is a directory')
    return stats.size
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message
    throw new Error(`cannot read ${file}: ${reason}`)
  }
}

/**
 * Imports plants from JSON Lines or CSV in batched transactions. Re-running the same file is harmless:
 * identical plants are skipped; a different plant under an existing id is a rejected line (never an
 * overwrite). Each rejected line is reported on stdout as `line N: reason`. Resolves to false when any
 * line was rejected (the command then exits 1).
 */
export async function importPlants(file: string, options: ImportOptions): Promise<boolean> {
  const format = importFormat(file, options.format)
  const size = batchSize(options.batchSize)
  const limit = bodyLimit(options.bodyLimit)
  // Standard input's length is not known ahead: progress then shows no share done.
  const totalBytes = file === STDIN ? 0 : readableSize(file)
  return withStore(options, openStore, async (store) => {
    const started = Date.now()
    const progress: ImportProgress = {
      lines: 0,
      bytes: 0,
      totalBytes,
      created: 0,
      unchanged: 0,
      rejected: 0,
      elapsedMs: 0,
    }
    const reporter = new ProgressReporter()
    // A line refused on sight while a batch is pending waits for that batch, so that the report
    // keeps the file's line order: a line the store refuses is known only once its batch is written.
    let batch: ImportItem[] = []
    let batchLines: number[] = []
    let rejections: Array<{ line: number; reason: string }> = []
    const reject = (line: number, reason: string) => {
      progress.rejected++
      if (batch.length === 0) process.stdout.write(`line ${line}: ${reason}\n`)
      else rejections.push({ line, reason })
    }
    const flush = async () => {
      // Rejections wait only behind a batch, so with no batch there is nothing to write.
      if (batch.length === 0) return
      const span = startSpan('import batch', { 'plantstore.import.batch.size': batch.length })
      let outcomes: Awaited<ReturnType<typeof store.plants.importBatch>>
      try {
        outcomes = await inSpan(span, () => store.plants.importBatch(batch))
      } catch (error) {
        endSpan(span, error)
        throw error
      }
      endSpan(span)
      outcomes.forEach((outcome, i) => {
        if (outcome === 'created') progress.created++
        else if (outcome === 'unchanged') progress.unchanged++
        else {
          const plant = (batch[i] as ImportItem).plant
          reject(batchLines[i] as number, `a different plant with id ${plant.id} already exists`)
        }
      })
      if (rejections.length > 0) {
        rejections.sort((a, b) => a.line - b.line)
        process.stdout.write(rejections.map((r) => `line ${r.line}: ${r.reason}\n`).join(''))
        rejections = []
      }
      batch = []
      batchLines = []
      progress.elapsedMs = Date.now() - started
      reporter.update(progress)
    }

    let columns: CsvColumns | undefined
    let lineNumber = 0
    /**
     * A CSV record whose quoted field is still open at the end of its line, with the number of the
     * line it began on: the lines after it are read as its continuation, so that it is one record,
     * reported once under its first line, and the rest of the field is not read as records of its own.
     */
    let open: { lines: string[]; line: number; bytes: number } | undefined
    /** Why the CSV record being read is refused whatever its fields say: a line of it is not UTF-8. */
    let notText: string | undefined
    // A CSV line is held to the body limit too, as a quoted field left open is: read whole, a line of
    // megabytes (a file whose lines end in CR alone is one line) would be held as a string, and past
    // V8's longest string end the import.
    const maxLineBytes = limit
    for await (const bytes of linesOf(file, maxLineBytes, (read) => {
      progress.bytes = read
    })) {
      // Waiting rejections count too, so that a run of bad lines is not held in memory.
      if (batch.length + rejections.length >= size) await flush()
      lineNumber++
      const recordLine = open?.line ?? lineNumber
      let line: string
      try {
        line = lineText(bytes, maxLineBytes)
      } catch (error) {
        if (!(error instanceof RejectedLine)) throw error
        if (format === 'csv' && columns === undefined) {
          // Such a file is one line, most often past the limit: its cause is what to say.
          const reason = bytes.includes(0x0d) ? CR_ALONE : error.message
          throw new Error(`line ${lineNumber}: ${reason}`)
        }
        if (format === 'jsonl') {
          progress.lines++
          reject(recordLine, error.message)
          continue
        }
        // Of a longer line only its first bytes were kept, too few to tell where its fields end. One
        // that goes on with a record already open ends that record below, past the limit.
        if (bytes.length > maxLineBytes && open === undefined) {
          progress.lines++
          reject(recordLine, `the record is longer than ${limit} bytes (--body-limit)`)
          continue
        }
        // Its quotes are still read (no invalid byte decodes to a quote or a comma): a line that
        // opens or goes on with a quoted field takes the lines after it in, which read as records
        // of their own would store plants made of the field's text.
        notText ??= error.message
        line = bytes.toString('utf8')
      }
      if (open !== undefined) {
        open.lines.push(line)
        open.bytes += bytes.length
        // A record with a line break is refused anyway: a quote left open holds at most the body
        // limit, not the rest of the file, and reading goes on with the line after.
        if (open.bytes > limit) {
          progress.lines++
          reject(open.line, `${new UnterminatedField().message}: no closing quote within ${limit} bytes`)
          open = undefined
          notText = undefined
          continue
        }
        if (endsInQuotedField(line)) continue
        // The line breaks belong to the field; the CR of a CRLF was taken off with the line's end.
        line = open.lines.join('\n')
        open = undefined
      } else if (line.trim() === '') continue
      if (format === 'csv' && columns === undefined) {
        try {
          columns = csvColumns(line)
        } catch (error) {
          throw new Error(`line ${lineNumber}: ${(error as Error).message}`)
        }
        continue
      }
      try {
        const plant =
          format === 'csv' ? plantFromCsvRecord(line, columns as CsvColumns) : plantFromJsonLine(line)
        if (notText !== undefined) throw new RejectedLine(notText)
        progress.lines++
        batch.push(
          options.emitEvents
            ? // Built as its batch is written, inside the batch's span: attempts link to that.
              {
                plant,
                event: (at: Date) =>
                  plantEvent('plant.created', plant, at, {
                    by: IMPORT_CONTEXT,
                    traceparent: currentTraceparent(),
                  }),
              }
            : { plant },
        )
        batchLines.push(recordLine)
      } catch (error) {
        if (!(error instanceof RejectedLine)) throw error
        if (error instanceof UnterminatedField) {
          open = { lines: [line], line: recordLine, bytes: bytes.length }
          continue
        }
        progress.lines++
        reject(recordLine, notText ?? error.message)
        notText = undefined
      }
    }
    // The file ended inside a quoted field.
    if (open !== undefined) {
      progress.lines++
      reject(open.line, new UnterminatedField().message)
    }
    await flush()
    progress.elapsedMs = Date.now() - started
    reporter.finish(progress)
    return progress.rejected === 0
  })
}
