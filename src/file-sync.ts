import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync } from 'node:fs'
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

/**
 * Gives a finished file (a backup's copy) its final name, unless a file appeared there meanwhile
 * (then false): a link fails where a rename would replace it. A file system without links (FAT) gets
 * a rename after a last look. The caller removes the old name, and makes the new one durable.
 */
export function giveNewName(partial: string, file: string): boolean {
  try {
    linkSync(partial, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error
    if (existsSync(file)) return false
    renameSync(partial, file)
    return true
  }
}
