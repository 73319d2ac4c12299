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
      let body: unknown
      try {
        body = parseJsonBody(text as string)
      } catch (error) {
        done(error as Error, undefined)
        return
      }
      done(null, body)
    })
  }
}

/** A JSON request body, exact; undefined when blank. Throws the 400 AppError of malformed JSON. */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0 || /^\s*$/.test(text)) return undefined
  try {
    return parseJsonExact(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : ''
    throw new AppError(errors.BODY_MALFORMED, `The request body is not valid JSON: ${detail}`)
  }
}
