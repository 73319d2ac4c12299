import { lstatSync } from 'node:fs'

/**
 * Refuses a path a command was told to write (export --output, backup) where something other than a
 * regular file stands: a symbolic link, a device, a named pipe or a socket. Written through, a link
 * planted in a folder others may write to (/tmp) had a privileged command overwrite the file it led
 * to, and a device or a pipe is no file that can be there complete or not at all. Nothing there, a
 * regular file or a folder is left to the command.
 */
export function refuseSpecialFile(path: string): void {
  let stats: ReturnType<typeof lstatSync>
  try {
    stats = lstatSync(path)
  } catch {
    return
  }
  const what = stats.isSymbolicLink()
    ? 'a symbolic link'
    : stats.isFIFO()
      ? 'a named pipe'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : stats.isSocket()
          ? 'a socket'
          : undefined
  if (what !== undefined) {
    throw new Error(
      `cannot write ${path}: it is ${what}, which is never written through; name a regular file`,
    )
  }
}
