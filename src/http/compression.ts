import { constants as zlib } from 'node:zlib'
import compress from '@fastify/compress'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

const ACCEPT_ENCODING = 'accept-encoding'

/** A Vary value with Accept-Encoding added, spelled as the compression plugin adds it. */
function varyAlsoByEncoding(vary: string | undefined): string {
  if (vary === undefined) return ACCEPT_ENCODING
  return vary.includes(ACCEPT_ENCODING) ? vary : `${vary}, ${ACCEPT_ENCODING}`
}

function varyByEncoding(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const vary = reply.getHeader('vary')
  reply.header('vary', varyAlsoByEncoding(vary === undefined ? undefined : String(vary)))
  done(null, payload)
}

/**
 * The framework responds to HEAD by running GET and then giving a bodiless response `Content-Length: 0`,
 * which on a 304 claims the resource is empty: RFC 9110 §8.6 allows there only the length a 200 would
 * have. Appended after the framework's own HEAD hook, so that a HEAD's 304 carries what GET's does.
 */
function headNotModifiedWithoutLength(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  if (reply.statusCode === 304) reply.removeHeader('content-length')
  done(null, payload)
}

/**
 * Large responses are worth compressing; brotli at quality 4 compresses well without the CPU of 11.
 * Request bodies are never decompressed: unreadableBody refuses a body's content coding, and the
 * plugin's own check would refuse a coding it does not know (or IDENTITY) even on a GET or a DELETE.
 *
 * RFC 9110 §12.5.5: a response of a route that compresses says it varies by Accept-Encoding in every
 * variant, not only the compressed one the plugin marks, or a cache could hand a compressed copy to a
 * client that cannot read it (or keep serving an uncompressed one to all). Every HEAD route, those
 * the framework makes from a GET included, responds 304 as its GET does.
 */
export async function installCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    globalDecompression: false,
    threshold: 1024,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
  })
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : [route.onSend].flat()
    if (route.compress !== false) hooks.push(varyByEncoding)
    if (route.method === 'HEAD') hooks.push(headNotModifiedWithoutLength)
    route.onSend = hooks
  })
}
