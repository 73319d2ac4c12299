/**
 * Tells this process's webhook dispatcher that a commit wrote events, so it reads them at once
 * instead of at its next poll. Only this process's commits ring it; other processes' events are
 * found by polling.
 */
export class AppendSignal {
  private readonly listeners = new Set<() => void>()

  watch(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Called by the plant store after a commit that wrote events. */
  appended(): void {
    for (const listener of this.listeners) listener()
  }
}
