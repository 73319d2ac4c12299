/**
 * The nearest-rank percentile: the smallest value at or below which `p` percent of the values lie
 * (p99 of 200 values is the 198th smallest). Undefined for no values.
 */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]
}
