import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

describe('the build step that ships the assets tsc does not emit', () => {
  it('replaces the migrations in dist whole, so one removed from src is no longer applied', async () => {
    // A copy of what the script reads, so the project's own dist is never touched mid-suite.
    const root = tempDir()
    for (const part of ['src/store', 'src/client/schema.d.ts', 'scripts/copy-assets.mjs']) {
      cpSync(join(ROOT, part), join(root, part), { recursive: true })
    }
    for (const store of ['sqlite', 'postgres']) {
      mkdirSync(join(root, `dist/store/${store}/migrations`), { recursive: true })
      writeFileSync(join(root, `dist/store/${store}/migrations/004_removed_since.sql`), 'SELECT 1;\n')
    }
    mkdirSync(join(root, 'dist/client'), { recursive: true })
    await promisify(execFile)(process.execPath, ['scripts/copy-assets.mjs'], { cwd: root })
    for (const store of ['sqlite', 'postgres']) {
      const shipped = readdirSync(join(root, `dist/store/${store}/migrations`)).sort()
      expect(shipped).toEqual(readdirSync(join(ROOT, `src/store/${store}/migrations`)).sort())
    }
    expect(existsSync(join(root, 'dist/client/schema.d.ts'))).toBe(true)
  })
})
