// The types of checkpoint-passes.js, which stays plain JavaScript for the checkpoint thread.
export declare const PASSES_BEFORE_RESTART: number
export declare function runCheckpoint(
  db: { pragma(source: string): unknown },
  mode: 'PASSIVE' | 'RESTART' | 'TRUNCATE',
  options: { limitMs: number; syncDatabase: () => void },
): void
