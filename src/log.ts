import type { FastifyBaseLogger } from 'fastify'
import { type Bindings, type ChildLoggerOptions, pino } from 'pino'
import type { LogLevel } from './config.js'

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

export function createLogger(level: LogLevel, destination: NodeJS.WritableStream = process.stdout) {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  )
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const

type ChildFactoryLogger = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean }

/**
 * Fastify gives every request a child logger bound to its request id; pino serializes (and redacts)
 * those bindings when the child is made, which is measurable work on every request. This factory
 * hands out a stand-in that makes the real child only when a line is written at an enabled level, so
 * at the default level a request that logs nothing costs no child at all.
 */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  let child: FastifyBaseLogger | undefined
  const real = () => {
    child ??= parent.child(bindings, options)
    return child
  }
  const enabled = (level: string) => {
    const check = (parent as ChildFactoryLogger).isLevelEnabled
    return typeof check === 'function' ? check.call(parent, level) : true
  }
  const logger = {
    get level() {
      return child?.level ?? parent.level
    },
    set level(value: string) {
      real().level = value
    },
    child: (more: Bindings, moreOptions?: ChildLoggerOptions) => real().child(more, moreOptions),
    silent: () => {},
  } as unknown as FastifyBaseLogger
  for (const level of LEVELS) {
    ;(logger as unknown as Record<string, unknown>)[level] = (...args: unknown[]) => {
      if (enabled(level)) (real()[level] as (...a: unknown[]) => void)(...args)
    }
  }
  return logger
}
