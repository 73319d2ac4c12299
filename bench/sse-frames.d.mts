// The types of bench/sse-frames.mjs, for the TypeScript that tests it.

export class FrameScanner {
  /** Frames with an id: the changes read. */
  readonly frames: number
  /** Frames whose id was not above the one before: a change read twice or out of order. */
  readonly unordered: number
  /** The last id read, as sent. */
  readonly lastId: string | undefined
  constructor(marker: string, onMarked: (tag: number, frames: number) => void)
  push(chunk: Buffer): void
  reset(): void
}
