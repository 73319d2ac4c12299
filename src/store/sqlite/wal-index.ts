// The state of a database's write-ahead log that every connection to it shares, in every process: the
// wal-index header at the start of the `-shm` file (https://www.sqlite.org/walformat.html, "The
// WAL-Index Header"). Its layout is part of SQLite's file format, since connections of different
// SQLite versions share it.
import { closeSync, openSync, readSync } from 'node:fs'
import { endianness } from 'node:os'

/** How long the log is, in frames since it last restarted, and how many of those are copied back. */
export interface LogState {
  frames: number
  backfilled: number
}

/** The header kept twice (48 bytes each), then the checkpoint's record, whose first field is nBackfill. */
const HEADER_BYTES = 100
const COPY_BYTES = 48
const MX_FRAME = 16
const N_BACKFILL = 96

/** Reads the log's state from `<database>-shm` without taking any lock: one small read per call. */
export class WalIndex {
  private fd: number | undefined
  private readonly buffer = Buffer.alloc(HEADER_BYTES)
  private readonly u32 =
    endianness() === 'LE'
      ? (at: number) => this.buffer.readUInt32LE(at)
      : (at: number) => this.buffer.readUInt32BE(at)

  constructor(private readonly shmPath: string) {}

  /**
   * The log's state, or undefined when there is no wal-index yet or a writer was changing it during
   * the read: a writer updates one copy of the header and then the other, so copies that disagree
   * were read mid-change.
   */
  read(): LogState | undefined {
    try {
      this.fd ??= openSync(this.shmPath, 'r')
      if (readSync(this.fd, this.buffer, 0, HEADER_BYTES, 0) < HEADER_BYTES) return undefined
    } catch {
      // Unknown, as before the wal-index exists: the batch writer reads it between a commit and that
      // commit's fsync, and a throw there would leave the commit's requests waiting for good.
      return undefined
    }
    const frames = this.u32(MX_FRAME)
    if (this.u32(COPY_BYTES + MX_FRAME) !== frames) return undefined
    return { frames, backfilled: this.u32(N_BACKFILL) }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
