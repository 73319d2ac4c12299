import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { methodNotAllowed } from './method-not-allowed.js'

/** Where `npm run build` writes the console: dist/console, from the source and the compiled server alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url))

const hidden = { hide: true } as FastifySchema

/**
 * The console (`/console`): the built page and its two files, public like the docs page, since what
 * it shows comes from the API with the token a person pastes into it. Each file is revalidated by its
 * ETag, so a new version is seen on the next load. Without a built console (a checkout that never ran
 * the build) the API is served without it.
 */
export async function consoleRoutes(
  app: FastifyInstance,
  { root = CONSOLE_DIR }: { root?: string | undefined } = {},
): Promise<void> {
  if (!existsSync(join(root, 'index.html'))) return
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    // One route per file found now: any other path under /console/ is a 404 in the Error shape.
    wildcard: false,
    index: false,
    schemaHide: true,
    cacheControl: false,
    setHeaders: (response) => response.setHeader('cache-control', 'no-cache'),
  })
  app.get('/console', { schema: hidden }, (_request, reply) =>
    reply.header('cache-control', 'no-cache').sendFile('index.html'),
  )
  // The page's own address is /console: its files are found from there.
  app.get('/console/', { schema: hidden }, (_request, reply) => reply.redirect('/console'))
  for (const url of ['/console', '/console/*']) methodNotAllowed(app, url, ['GET', 'HEAD'])
}
