import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

type AnyValue = {
  stringValue?: string
  intValue?: number | string
  boolValue?: boolean
  doubleValue?: number
}
interface KeyValue {
  key: string
  value: AnyValue
}

/** A span as an OTLP/HTTP JSON export carries it, with its resource's attributes beside it. */
export interface ExportedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, string | number | boolean | undefined>
  links: Array<{ traceId: string; spanId: string }>
  status: { code: number; message?: string }
  resource: Record<string, string | number | boolean | undefined>
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string
  /** Every request body received, as it came. */
  raw(): string
  spans(): ExportedSpan[]
  close(): Promise<void>
}

function plainValue(value: AnyValue): string | number | boolean | undefined {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.boolValue !== undefined) return value.boolValue
  return value.doubleValue
}

function attributes(list: KeyValue[] | undefined): ExportedSpan['attributes'] {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]))
}

/** A collector on 127.0.0.1 that takes OTLP/HTTP JSON exports (OTEL_EXPORTER_OTLP_PROTOCOL=http/json). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      bodies.push(body)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    raw: () => bodies.join('\n'),
    spans: () =>
      bodies.flatMap((body) =>
        (JSON.parse(body).resourceSpans ?? []).flatMap(
          (rs: { resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: unknown[] }> }) =>
            (rs.scopeSpans ?? []).flatMap((ss) =>
              (ss.spans ?? []).map((s) => {
                const span = s as Omit<ExportedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] }
                return {
                  ...span,
                  attributes: attributes(span.attributes),
                  links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
                  resource: attributes(rs.resource?.attributes),
                }
              }),
            ),
        ),
      ),
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close').catch(() => {})
    },
  }
}

/** The OTEL_* variables that send a process's traces to `receiver`, at once rather than in batches. */
export function tracingEnv(
  receiver: OtlpReceiver,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    ...extra,
  }
}
