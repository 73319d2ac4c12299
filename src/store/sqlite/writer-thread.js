// The SQLite writer thread: it owns a second connection and commits create batches, so that SQLite's
// work for a batch never stalls the event loop that serves requests.
//
// Durability without a stall: the connection commits with synchronous=NORMAL (the commit writes the
// write-ahead log but does not fsync it), then this thread fsyncs the log itself, on libuv's thread
// pool, and only then reports the batch's outcomes. A batch is answered only once it is on disk, as
// with synchronous=FULL; but while one fsync runs, the next batch is already being written, and one
// fsync covers every batch committed before it started. Checkpoints under NORMAL still fsync the log
// before copying it and the database after, so a checkpoint never drops a frame not yet synced here.
import { closeSync, fdatasync, openSync } from 'node:fs'
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { prepareBatchWriter } from './batch.js'

const db = new Database(workerData.path)
db.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = NORMAL')
db.pragma('foreign_keys = ON')
// Random ids dirty random pages: checkpointing less often copies each page fewer times.
db.pragma('wal_autocheckpoint = 4000')
const writeOnce = prepareBatchWriter(db)
// SQLite's own busy handler sleeps at least a millisecond, then 2, 5, 10…: far longer than another
// connection's short transaction holds the write lock. Batches wait in steps from 50 µs instead.
db.pragma('busy_timeout = 0')
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Runs `attempt` until it gets past a write lock or snapshot another connection holds (it throws
 * SQLITE_BUSY), waiting from 50 µs and doubling to 4 ms between tries, for at most `limitMs`. It
 * sleeps this thread only; the event loop serving requests is another thread.
 */
function retryWhileBusy(limitMs, attempt) {
  const deadline = Date.now() + limitMs
  for (let waitMs = 0.05; ; waitMs = Math.min(waitMs * 2, 4)) {
    try {
      return attempt()
    } catch (error) {
      if (error?.code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
    }
    Atomics.wait(pause, 0, 0, waitMs)
  }
}

/** Writes the batch; a busy database fails at BEGIN IMMEDIATE, before anything was written. */
function writeBatch(batch, now) {
  return retryWhileBusy(workerData.busyTimeoutMs, () => writeOnce(batch, now))
}

/**
 * Copies the whole log into the database and truncates the file (the automatic checkpoint is PASSIVE
 * and never shrinks it). Done here, between batches, it never blocks the event loop; it needs every
 * reader on the newest snapshot, so while one is not, it retries for a moment and else waits for its
 * next turn. Under synchronous=NORMAL a checkpoint fsyncs the log first, so no frame still awaiting
 * its fsync here is lost by the truncation.
 */
function checkpoint() {
  try {
    retryWhileBusy(250, () => {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)')
      if (result?.busy)
        throw Object.assign(new Error('a reader holds an older snapshot'), { code: 'SQLITE_BUSY' })
    })
  } catch (error) {
    if (error?.code !== 'SQLITE_BUSY') throw error
  }
}

// Tests name a file that cannot be opened here, to see a failed fsync stop the writer.
const walPath = workerData.syncPath ?? `${workerData.path}-wal`

/** Committed batches waiting for the next fsync: [{ seq, result }]. */
const awaitingSync = []
let syncing = false
let closing = false
/** Set for good once an fsync fails: after that, nothing in the page cache can be trusted. */
let failed
/**
 * The log, opened once it exists (after the first commit): an fsync flushes the file, whichever
 * descriptor asks. SQLite never deletes the log while this connection is open, and a TRUNCATE
 * checkpoint keeps the same file.
 */
let walFd

parentPort.on('message', (first) => {
  // Batches that queued up while the last transaction ran are written together, in one transaction:
  // the event loop sends what it gathered every turn, and this thread takes all of it at once.
  let message = first
  while (message !== undefined) {
    if (message === 'close') {
      closing = true
      closeWhenIdle()
      return
    }
    if (message.checkpoint) {
      answerCheckpoint(message.seq)
      message = receiveMessageOnPort(parentPort)?.message
      continue
    }
    const batches = [message]
    message = receiveMessageOnPort(parentPort)?.message
    while (message?.batch) {
      batches.push(message)
      message = receiveMessageOnPort(parentPort)?.message
    }
    commitBatches(batches)
  }
})

/** An error as it crosses to the event loop: its message and SQLite code. */
function errorReply(error) {
  return { message: String(error?.message ?? error), code: error?.code }
}

function answerCheckpoint(seq) {
  if (failed) {
    parentPort.postMessage({ seq, error: failed })
    return
  }
  try {
    checkpoint()
    parentPort.postMessage({ seq, result: { outcomes: [], queued: false } })
  } catch (error) {
    parentPort.postMessage({ seq, error: errorReply(error) })
  }
}

/** One transaction for the rows of several batches; each batch is answered with its own outcomes. */
function commitBatches(batches) {
  if (failed) {
    for (const { seq } of batches) parentPort.postMessage({ seq, error: failed })
    return
  }
  let written
  try {
    const rows = batches.length === 1 ? batches[0].batch : batches.flatMap((b) => b.batch)
    written = writeBatch(rows, batches[0].now)
  } catch (error) {
    const reply = errorReply(error)
    for (const { seq } of batches) parentPort.postMessage({ seq, error: reply })
    return
  }
  let at = 0
  for (const { seq, batch } of batches) {
    // Answered after the fsync; the next batch is written meanwhile.
    // Whether this batch's own rows queued a delivery is not known: the transaction's answer stands in.
    const outcomes = written.outcomes.slice(at, at + batch.length)
    awaitingSync.push({ seq, result: { outcomes, queued: written.queued } })
    at += batch.length
  }
  if (!syncing) syncLog()
}

function syncLog() {
  syncing = true
  const group = awaitingSync.splice(0)
  try {
    walFd ??= openSync(walPath, 'r+')
  } catch (error) {
    synced(group, error)
    return
  }
  fdatasync(walFd, (error) => synced(group, error))
}

function synced(group, error) {
  syncing = false
  if (error) {
    failed = {
      message: `the write-ahead log could not be made durable: ${error.message}`,
      code: error.code,
      durability: true,
    }
    for (const { seq } of group.concat(awaitingSync.splice(0))) parentPort.postMessage({ seq, error: failed })
  } else {
    for (const { seq, result } of group) parentPort.postMessage({ seq, result })
  }
  if (awaitingSync.length > 0) syncLog()
  else closeWhenIdle()
}

function closeWhenIdle() {
  if (!closing || syncing || awaitingSync.length > 0) return
  db.close()
  if (walFd !== undefined) closeSync(walFd)
  parentPort.close()
}
