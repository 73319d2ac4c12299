import { closeSync, fsyncSync, openSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * Flushes a file to the disk, whoever wrote it (a stream's own descriptor, or SQLite's VACUUM INTO,
 * which syncs nothing): an fsync on any descriptor of a file writes back all of its dirty pages.
 */
export function syncFile(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Makes the name just given to a file (by a rename or a link) durable: a name is an entry of its
 * folder, which a power loss can otherwise roll back to before the rename, leaving nothing there.
 */
export function syncFolderOf(path: string): void {
  syncFile(dirname(path))
}
