import { lstatSync, type Stats, statSync } from 'node:fs'

/** What stands at a path, other than a regular file or a folder, named as a refusal says it. */
const SPECIAL_FILES: Array<[(stats: Stats) => boolean, string]> = [
  [(s) => s.isSymbolicLink(), 'a symbolic link'],
  [(s) => s.isFIFO(), 'a named pipe'],
  [(s) => s.isCharacterDevice() || s.isBlockDevice(), 'a device'],
  [(s) => s.isSocket(), 'a socket'],
]

/**
 * Refuses a path a command was told to write (export --output, backup) where something other than a
 * regular file stands: a symbolic link, a device, a named pipe or a socket. Written through, a link
 * planted in a folder others may write to (/tmp) had a privileged command overwrite the file it led
 * to, and a device or a pipe is no file that can be there complete or not at all. Nothing there, a
 * regular file or a folder is left to the command.
 */
export function refuseSpecialFile(path: string): void {
  let stats: Stats
  try {
    stats = lstatSync(path)
  } catch {
    return
  }
  const what = SPECIAL_FILES.find(([is]) => is(stats))?.[1]
  if (what !== undefined) {
    throw new Error(
      `cannot write ${path}: it is ${what}, which is never written through; name a regular file`,
    )
  }
}

/** Whether the path leads to a folder; a path that cannot be looked at is left to what follows to report. */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
