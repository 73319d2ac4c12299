// The parts of @bcoe/v8-coverage (which ships no types) that coverage-provider.ts uses.
declare module '@bcoe/v8-coverage' {
  export interface ScriptCov {
    scriptId: string
    url: string
    functions: {
      functionName: string
      isBlockCoverage: boolean
      ranges: { startOffset: number; endOffset: number; count: number }[]
    }[]
  }
  export interface ProcessCov {
    result: ScriptCov[]
  }
  export function mergeProcessCovs(processCovs: readonly ProcessCov[]): ProcessCov
}
