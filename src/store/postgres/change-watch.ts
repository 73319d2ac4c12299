import type { ChannelListener } from './revocation.js'

/** Notified in every transaction that writes plant changes (plants.ts), named as the revocations' channel. */
export const CHANGES_CHANNEL = 'plantstore_plants_changed'

/**
 * The SQL expression of that notification's payload: the schema of the tables changed, so that a
 * store in another schema of the same database is not woken by this one's changes.
 */
export const CHANGES_PAYLOAD = "coalesce(current_schema(), '')"

/** The connection that listens for notifications (RevocationWatch). */
export interface Listening {
  listenTo(channel: string, listener: ChannelListener): () => void
}

/**
 * The change feed's wake-ups: rung at once after this process's commits that wrote changes, and on
 * another instance's notification. The channel is listened to only while this process has a watcher,
 * so instances nobody reads the feed from are never woken.
 */
export class ChangeWatch {
  private readonly listeners = new Set<() => void>()
  private unlisten: (() => void) | undefined

  constructor(private readonly connection: Listening) {}

  watch(listener: () => void): () => void {
    this.listeners.add(listener)
    if (this.unlisten === undefined) {
      const rings: ChannelListener = { notified: () => this.ring(), listening: () => this.ring() }
      this.unlisten = this.connection.listenTo(CHANGES_CHANNEL, rings)
    }
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return
      this.unlisten?.()
      this.unlisten = undefined
    }
  }

  /**
   * A listener that throws is the listener's failure, not the write's that rang: the others are
   * still told, and the write settles as it would have.
   */
  ring(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener()
      } catch (error) {
        process.emitWarning(error as Error)
      }
    }
  }
}
