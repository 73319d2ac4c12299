import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * `mkdir -p`, one folder at a time. Node's `mkdirSync(path, { recursive: true })` never returns for a
 * path under `/proc` or `/sys`: those refuse a new child with ENOENT although the parent exists, so
 * Node makes the parent (EEXIST), retries the child, and spins with the event loop frozen.
 */
export function makeFolder(path: string): void {
  try {
    makeOne(path)
  } catch (error) {
    const parent = dirname(path)
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === path) throw error
    makeFolder(parent)
    // The parent is in place now, so a second ENOENT is the filesystem's final answer.
    makeOne(path)
  }
}

function makeOne(path: string): void {
  try {
    // Its owner's alone, as the files made in it are: under an open umask (000) a folder others may
    // write to would let them replace the database, its log or a backup with a file of their own.
    mkdirSync(path, 0o700)
  } catch (error) {
    // Another process may have made it meanwhile; a file of that name stays an error.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(path).isDirectory()) return
    throw error
  }
}
