// Where the benchmark's files and tools are: the checkout it runs from, its launcher and wrk.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../', import.meta.url))
export const BENCH = join(ROOT, 'bench')
export const BIN = join(ROOT, 'bin', 'plantstore')
export const WRK = process.env.WRK ?? 'wrk'
