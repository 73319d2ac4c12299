import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'vitest/config'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url))

/**
 * The validators generated from the schemas exist only once built (scripts/shape-validators.mjs):
 * code run from src uses those of the build (test/shape-validators.test.ts checks that they agree
 * with the schemas in src).
 */
export const builtShapeValidators: Plugin = {
  name: 'built-shape-validators',
  resolveId(id, importer) {
    if (!id.endsWith('/shape-validators.js') || importer === undefined) return null
    const path = resolve(dirname(importer), id)
    return path.startsWith(SRC) ? join(DIST, path.slice(SRC.length)) : null
  },
}
