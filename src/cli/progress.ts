/** What an import has done so far. */
export interface ImportProgress {
  lines: number
  bytes: number
  totalBytes: number
  created: number
  unchanged: number
  rejected: number
  elapsedMs: number
}

const count = (n: number) => n.toLocaleString('en-US')

function seconds(ms: number): string {
  const s = Math.round(ms / 1000)
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`
}

function describe(p: ImportProgress): string {
  const rate = p.elapsedMs > 0 ? Math.round((p.lines * 1000) / p.elapsedMs) : 0
  return `${count(p.lines)} ${p.lines === 1 ? 'line' : 'lines'} (${count(p.created)} created, ${count(p.unchanged)} unchanged, ${count(p.rejected)} rejected), ${count(rate)} lines/s`
}

/**
 * Progress on stderr: a redrawn bar with rate and ETA on a terminal; elsewhere (logs, CI) a plain line
 * every few seconds, so a long import shows it is alive without flooding the log.
 */
export class ProgressReporter {
  private lastDraw = 0
  private readonly intervalMs: number

  constructor(
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly tty: boolean = Boolean(process.stderr.isTTY),
  ) {
    this.intervalMs = tty ? 200 : 5000
  }

  update(p: ImportProgress): void {
    if (p.elapsedMs - this.lastDraw < this.intervalMs) return
    this.lastDraw = p.elapsedMs
    if (!this.tty) {
      this.out.write(`import: ${describe(p)}\n`)
      return
    }
    const fraction = p.totalBytes > 0 ? Math.min(1, p.bytes / p.totalBytes) : 0
    const width = 24
    const filled = Math.round(fraction * width)
    const eta = fraction > 0 ? seconds((p.elapsedMs / fraction) * (1 - fraction)) : '?'
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`
    this.out.write(`\r\x1b[K${bar} ${describe(p)}, ETA ${eta}`)
  }

  finish(p: ImportProgress): void {
    if (this.tty) this.out.write('\r\x1b[K')
    this.out.write(`import done in ${(p.elapsedMs / 1000).toFixed(1)}s: ${describe(p)}\n`)
  }
}
