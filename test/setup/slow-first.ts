import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Starts the files that run real processes (test/deploy/'s containers first, then test/process/ and
 * the benchmark's own) before the rest.
 * They take the longest, mostly waiting on what they started; started last, one of them would keep
 * the run going alone at its end while the other workers sit idle. Within each group vitest's own
 * order stands (the slowest of the last run first, or the largest file when there was none).
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const containers = (spec: TestSpecification) => /[\\/]test[\\/]deploy[\\/]/.test(spec.moduleId)
    const slow = (spec: TestSpecification) => /[\\/](test[\\/]process|bench)[\\/]/.test(spec.moduleId)
    return [
      ...sorted.filter(containers),
      ...sorted.filter(slow),
      ...sorted.filter((spec) => !containers(spec) && !slow(spec)),
    ]
  }
}
