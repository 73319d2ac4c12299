/**
 * How long to wait before starting again something that ended unexpectedly (a worker process, a
 * thread): at once after a run of `stableMs` or more, which was healthy; after a shorter one, `firstMs`,
 * doubling with each short run in a row up to `maxMs`. A fault that ends every start then costs a
 * start and a log line now and then, not a loop that forks or spawns as fast as each one dies.
 */
export class RestartBackoff {
  private nextMs = 0

  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
    private readonly stableMs: number,
  ) {}

  /** The wait before the next start, given how long the run that just ended lasted. */
  after(ranMs: number): number {
    this.nextMs = ranMs >= this.stableMs ? 0 : Math.min(Math.max(this.nextMs * 2, this.firstMs), this.maxMs)
    return this.nextMs
  }
}
