import { closeSync, fchmodSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'

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
    } finally {
      closeSync(fd)
    }
    renameSync(partial, path)
  } catch (error) {
    rmSync(partial, { force: true })
    throw error
  }
}
