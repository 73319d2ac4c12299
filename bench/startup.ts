// The CLI's start-up, against node's own: `plantstore --help` and `plantstore token create` on a
// fresh SQLite file, each beside `node -e 0`, in the same run. The three run in turn, one of each at
// a time in an order that turns, so that a shared machine's drift falls on all three alike; each
// command's wall time is the median of its runs.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './median.js'
import { BIN, ROOT } from './paths.js'

export interface StartupCommand {
  name: string
  label: string
  /** Each run's wall time, from spawn to exit, in the order they ran. */
  runsMs: number[]
  medianMs: number
  /** Its median ÷ that of `node -e 0`. */
  vsNode: number
}

export interface Startup {
  runs: number
  commands: StartupCommand[]
}

interface Command {
  name: string
  label: string
  /** The command line of run number `run`, with `dir` a folder of the measurement's own. */
  line: (dir: string, run: number) => [string, string[]]
}

// `node` as bin/plantstore's `#!/usr/bin/env node` finds it: the same node for all three.
const COMMANDS: Command[] = [
  { name: 'node', label: 'node -e 0', line: () => ['node', ['-e', '0']] },
  { name: 'help', label: 'plantstore --help', line: () => [BIN, ['--help']] },
  {
    name: 'token-create',
    label: 'plantstore token create',
    // A new file each run: creating and migrating the database is part of an operator's first token.
    line: (dir, run) => [
      BIN,
      ['token', 'create', '--name', 'bench', '--database-url', `sqlite:${join(dir, `tokens-${run}.db`)}`],
    ],
  },
]

/** The wall time of one run, in ms; a command that fails ends the measurement. */
function timed([command, args]: [string, string[]]): number {
  const started = performance.now()
  // Standard output is a pipe, not discarded: token create refuses to print a token nobody reads.
  const result = spawnSync(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = performance.now() - started
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status ?? result.signal}: ${result.stderr}`,
    )
  }
  return ms
}

/** `runs` runs of each command, after one of each unmeasured (the first start reads its files from disk). */
export function measureStartup(runs: number): Startup {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-startup-'))
  const runsMs = COMMANDS.map((): number[] => [])
  try {
    // Run 0 is the warm-up, not kept.
    for (let run = 0; run <= runs; run++) {
      process.stderr.write(`bench: CLI start-up, ${run === 0 ? 'warm-up' : `run ${run} of ${runs}`}\n`)
      for (let k = 0; k < COMMANDS.length; k++) {
        const i = (run + k) % COMMANDS.length
        const ms = timed((COMMANDS[i] as Command).line(dir, run))
        if (run > 0) runsMs[i]?.push(ms)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const medians = runsMs.map(median)
  const node = medians[0] as number
  return {
    runs,
    commands: COMMANDS.map(({ name, label }, i) => ({
      name,
      label,
      runsMs: runsMs[i] as number[],
      medianMs: medians[i] as number,
      vsNode: (medians[i] as number) / node,
    })),
  }
}
