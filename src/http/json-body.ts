import type { FastifyInstance } from 'fastify'
import { AppError, errors } from '../errors.js'
import { parseJsonExact } from '../plants/json.js'

/** Media types whose bodies are JSON; parameters such as `charset=utf-8` are allowed. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json']

/**
 * Replaces Fastify's JSON parser with one that keeps int64 ids exact (see plants/json.ts). An empty
 * body parses to `undefined`, which validation reports as a missing body.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  for (const type of JSON_MEDIA_TYPES) {
    app.addContentTypeParser(type, { parseAs: 'string' }, (_request, text, done) => {
      const body = text as string
      if (body.length === 0 || /^\s*$/.test(body)) {
        done(null, undefined)
        return
      }
      try {
        done(null, parseJsonExact(body))
      } catch (error) {
        const detail = error instanceof Error ? error.message : ''
        done(new AppError(errors.BODY_MALFORMED, `The request body is not valid JSON: ${detail}`), undefined)
      }
    })
  }
}
