/**
 * Whether a test that needs something of the machine must be skipped for lack of it. Outside CI it is
 * skipped, saying so; under CI=true the file fails instead, since a run that quietly skipped what
 * it could not check would pass for one that checked it.
 */
export function lacking(available: boolean, what: string): boolean {
  if (available) return false
  if (process.env.CI === 'true') throw new Error(`CI=true but ${what}: these tests must run in CI`)
  process.stderr.write(`\n  SKIPPED: ${what}\n`)
  return true
}
