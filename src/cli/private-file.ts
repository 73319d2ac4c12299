import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { syncFolderOf } from '../file-sync.js'
import { isFolder } from './output-file.js'

/**
 * Writes a secret that only this user may read, whatever was at `path` before: a mode given when
 * opening applies only to a file the open creates, so an existing 0644 file would have kept its mode.
 * The secret goes into a new file beside it, made 0600 before anything is written (the umask could
 * only have narrowed it further), which then replaces `path` in one step.
 */
export function writePrivateFile(path: string, text: string): void {
  const partial = `${path}.partial`
  rmSync(partial, { force: true })
  try {
    const fd = openSync(partial, 'wx', 0o600)
    try {
      fchmodSync(fd, 0o600)
      writeSync(fd, text)
      // On disk before the store's commit, which is fsynced: after a power loss the store must not
      // hold a bootstrap token whose file came back empty, for no later start would make another.
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(partial, path)
    syncFolderOf(path)
  } catch (error) {
    rmSync(partial, { force: true })
    throw error
  }
}

/**
 * Why a file the user named could not be written (by writePrivateFile, or export's --output), in words
 * about that path: the file system's own message names the copy written beside it.
 */
export function whyNotWritable(error: unknown): string {
  const { code, syscall, path } = error as NodeJS.ErrnoException
  if (syscall === 'mkdir' && code === 'EEXIST') return `a file stands where its folder ${path} should be`
  if (syscall === 'mkdir') return `its folder ${path} cannot be made (${code})`
  // A folder that exists and still takes no new file (/proc, a read-only mount's special folders).
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return path !== undefined && isFolder(dirname(path))
      ? 'its folder cannot be written'
      : 'its folder does not exist'
  if (code === 'EISDIR') return 'it is a folder; name a file in it'
  if (code === 'EACCES' || code === 'EPERM') return 'this user may not write there'
  return (error as Error).message
}
