// What SQLite's errors leave unsaid (which file, and what to do), said for the operator.

/**
 * SQLite's errors at open do not say which file, nor what to do: a read-only one that the folder
 * matters too (WAL files), a full one that it is the disk, not the database, that has no room, and
 * "unable to open database file" (a folder this user may not enter, a file it may not read) nothing.
 */
export function explainOpenFailure(error: unknown, path: string): unknown {
  const explained = explainWriteFailure(error, path)
  if (explained !== error) return explained
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return error
  const said = (error as Error).message
  if (code === 'SQLITE_CANTOPEN') {
    return new Error(
      `cannot open ${path} (${said}): it must be a file (or the name of a new one) that this user may read and write, in a folder it may enter`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_NOTADB') {
    return new Error(`${path} is not a SQLite database (${said}): it was left as it was`, {
      cause: error,
    })
  }
  // A file cut short or overwritten in part: the bare "database disk image is malformed" named
  // neither the file nor the way back.
  if (code.startsWith('SQLITE_CORRUPT')) {
    return new Error(`${path} is damaged (${said}): restore a backup of it (see Backup and restore)`, {
      cause: error,
    })
  }
  return error
}

/**
 * A write that fails once a command is under way (an import that fills the disk, a file made
 * read-only meanwhile) says as little as one at open ("database or disk is full", "disk I/O error"):
 * which file, and what to do, are said alike.
 */
export function explainWriteFailure(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return error
  const said = (error as Error).message
  if (code.startsWith('SQLITE_READONLY')) {
    return new Error(
      `cannot write to ${path} (${said}): this user needs write access to the file and its folder`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_FULL') {
    return new Error(`cannot write to ${path} (${said}): the disk holding it has no room left`, {
      cause: error,
    })
  }
  // The `-shm` file a WAL database is used through (32 KiB, made by the first connection to open it)
  // could not be sized: a full disk, or a file-size limit.
  if (code === 'SQLITE_IOERR_SHMSIZE') {
    return new Error(
      `cannot write to ${path}-shm (${said}): the disk holding the database may have no room left`,
      { cause: error },
    )
  }
  // A failing disk, or a file past the process's size limit (ulimit -f).
  if (code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC') {
    return new Error(`cannot write to ${path} (${said})`, { cause: error })
  }
  return error
}
