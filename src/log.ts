import type { FastifyBaseLogger } from 'fastify'
import { type Bindings, type ChildLoggerOptions, type Logger, pino } from 'pino'
import type { LogLevel } from './config.js'
import { redactTokens } from './redact.js'

// Anything that could hold a credential is censored wherever it appears in a log object.
const REDACT = [
  'authorization',
  'token',
  'secret',
  '*.authorization',
  '*.token',
  '*.secret',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
]

/**
 * The longest line written: POSIX makes a write of at most PIPE_BUF bytes (4096 on Linux) to a pipe
 * atomic. Under --workers N every process writes to the same stdout, and a longer line (a request's
 * 16 KB URL, a long stack) could be split by another worker's line and reach the reader as two broken
 * ones.
 */
export const LINE_BYTES_MAX = 4096
/** What a cut string keeps at least, so the line still says what it was about. */
const CUT_KEEPS = 64
const CUT_MARK = '…'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Every string value of a parsed line, as the object (or array) that holds it and its key there. */
function stringsOf(value: Json, found: Array<[Record<string, Json>, string]>): void {
  if (value === null || typeof value !== 'object') return
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner === 'string') found.push([value as Record<string, Json>, key])
    else stringsOf(inner, found)
  }
}

/**
 * The start of `text` that is at most `bytes` bytes of UTF-8, or else its first CUT_KEEPS code units,
 * in whole characters: counted in code units, a cut would take far more of a line in other scripts
 * than it has to, and one through a surrogate pair would leave half of it, which JSON.stringify writes as a lone
 * `\ud83c` that a strict JSON reader refuses.
 */
function startOf(text: string, bytes: number): string {
  let end = 0
  let used = 0
  for (const char of text) {
    const size = Buffer.byteLength(char)
    if (used + size > bytes && end + char.length > CUT_KEEPS) break
    used += size
    end += char.length
  }
  return text.slice(0, end)
}

/**
 * A line of at most LINE_BYTES_MAX bytes (newline included), still one JSON object: a longer one
 * has its longest strings cut, each then ending in `…`, until it fits.
 */
export function fitLine(line: string): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most lines need no measuring.
  if (line.length * 3 <= LINE_BYTES_MAX || Buffer.byteLength(line) <= LINE_BYTES_MAX) return line
  let parsed: Json
  try {
    parsed = JSON.parse(line) as Json
  } catch {
    return line
  }
  const strings: Array<[Record<string, Json>, string]> = []
  stringsOf(parsed, strings)
  const text = ([holder, key]: [Record<string, Json>, string]) => holder[key] as string
  let fitted = line
  for (let over = Buffer.byteLength(line) - LINE_BYTES_MAX; over > 0; ) {
    // A string already cut down to what it keeps is not cut again.
    const cuttable = strings.filter((at) => text(at).length > CUT_KEEPS + CUT_MARK.length)
    if (cuttable.length === 0) break
    const longest = cuttable.reduce((a, b) => (text(b).length > text(a).length ? b : a))
    // A character cut takes at least its UTF-8 bytes off the line (more if escaped); the mark adds three.
    longest[0][longest[1]] = startOf(text(longest), Buffer.byteLength(text(longest)) - over - 3) + CUT_MARK
    fitted = `${JSON.stringify(parsed)}\n`
    over = Buffer.byteLength(fitted) - LINE_BYTES_MAX
  }
  return fitted
}

export function createLogger(level: LogLevel, destination: NodeJS.WritableStream = process.stdout) {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      hooks: { streamWrite: (line) => fitLine(redactTokens(line)) },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  )
}

/**
 * The logger for the line that tells where the service listens. With `--port 0` that line is the
 * only place the chosen port appears, so a level above `info` (`warn`, say) still writes it; only
 * `silent` asks for no line at all.
 */
export function addressLogger(logger: Logger): Logger {
  if (logger.isLevelEnabled('info') || logger.level === 'silent') return logger
  return logger.child({}, { level: 'info' })
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LogMethod = (...args: unknown[]) => void
type ChildFactoryLogger = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }

/** Stands in for a request's child logger until a line is written at an enabled level. */
class LazyChild {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options)
    return this.made
  }

  /** Adds bindings to every line written from now on. */
  bind(more: Bindings): void {
    if (this.made) this.made = this.made.child(more)
    else this.bindings = { ...this.bindings, ...more }
  }

  isLevelEnabled(level: string): boolean {
    const check = (this.parent as ChildFactoryLogger).isLevelEnabled
    return typeof check !== 'function' || check.call(this.parent, level)
  }

  private write(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real()[level] as LogMethod)(...args)
  }

  get level(): string {
    return this.made?.level ?? this.parent.level
  }
  set level(value: string) {
    this.real().level = value
  }
  child(more: Bindings, moreOptions?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(more, moreOptions)
  }
  fatal(...args: unknown[]) {
    this.write('fatal', args)
  }
  error(...args: unknown[]) {
    this.write('error', args)
  }
  warn(...args: unknown[]) {
    this.write('warn', args)
  }
  info(...args: unknown[]) {
    this.write('info', args)
  }
  debug(...args: unknown[]) {
    this.write('debug', args)
  }
  trace(...args: unknown[]) {
    this.write('trace', args)
  }
  silent() {}
}

/**
 * Fastify gives every request a child logger bound to its request id; pino serializes (and redacts)
 * those bindings when the child is made, which is measurable work on every request. This factory
 * hands out a stand-in that makes the real child only when a line is written at an enabled level, so
 * at the default level a request that logs nothing costs one small object.
 */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChild(parent, bindings, options) as unknown as FastifyBaseLogger
}

/**
 * Adds bindings to a request's log lines (its trace id, once its span exists): a stand-in made by
 * lazyChildLogger takes them at no cost until a line is written.
 */
export function addRequestBindings(log: FastifyBaseLogger, more: Bindings): void {
  if (log instanceof LazyChild) log.bind(more)
}

/** Whether the logger writes lines of this level (true for a logger that cannot tell). */
export function logsAt(logger: FastifyBaseLogger, level: string): boolean {
  const check = (logger as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled
  return typeof check !== 'function' || check.call(logger, level)
}
