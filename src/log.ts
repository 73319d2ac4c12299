import { pino } from 'pino'
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
