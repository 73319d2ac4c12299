import { reportOnStderr } from '../cli/report.js'
import { endSpan, inSpan, startSpan } from './active.js'
import { readTracingSettings } from './settings.js'

/**
 * Runs a command (import, export) in one span, `plantstore NAME`, when the OTEL_* variables ask for
 * traces, and exports them before the command ends. Without them it only runs the command: the SDK
 * is not loaded.
 */
export async function traceCommand<T>(name: string, run: () => Promise<T>): Promise<T> {
  const settings = readTracingSettings()
  if (!settings) return run()
  const { startTracing } = await import('./sdk.js')
  const sdk = await startTracing(settings, ({ status, reason }) =>
    reportOnStderr(
      `traces could not be exported: ${status === undefined ? reason : `status ${status}, ${reason}`}`,
    ),
  )
  const span = startSpan(`plantstore ${name}`)
  try {
    const result = await inSpan(span, run)
    endSpan(span)
    return result
  } catch (error) {
    endSpan(span, error)
    throw error
  } finally {
    await sdk.shutdown(5000)
  }
}
