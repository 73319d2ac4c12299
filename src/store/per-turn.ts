import type { VersionedPlant } from './types.js'

/** A point read waiting for the end of its turn, when the turn's reads are made together. */
export interface PendingRead {
  id: bigint
  resolve: (plant: VersionedPlant | undefined) => void
  reject: (error: unknown) => void
}

/**
 * Gathers what is asked during one turn of the event loop and hands it over all at once at the turn's
 * end (setImmediate runs once the turn's I/O callbacks are done): the creates of one group commit,
 * the point reads of one read transaction.
 */
export class PerTurn<T> {
  private items: T[] = []
  private scheduled = false

  constructor(private readonly flush: (items: T[]) => void) {}

  add(item: T): void {
    this.items.push(item)
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      const items = this.items
      this.items = []
      this.flush(items)
    })
  }

  /** Something was added this turn and has not been handed over yet. */
  get pending(): boolean {
    return this.scheduled
  }
}
