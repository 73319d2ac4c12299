// What the published document promises an operation can answer, and which of those promises no test
// saw kept. Kept apart from test/helpers/contract.ts, which needs a test worker: the run's teardown
// (test/setup/contract-coverage.ts) uses this too.

/** One error answer an operation documents, as `operationId status code`. */
export function answerKey(operationId: string, status: number | string, code: number | string): string {
  return `${operationId} ${status} ${code}`
}

/** The codes an error response lists in its description, `(error codes: …)`; undefined if none. */
export function listedCodes(description: string | undefined): string[] | undefined {
  return /\(error codes: ([\d, ]+)\)/.exec(description ?? '')?.[1]?.split(', ')
}

/** Every error answer the operations document: each listed code under each error status. */
export function listedAnswers(
  operations: Array<{ operationId: string; responses: Record<string, { description?: string }> }>,
): string[] {
  const keys: string[] = []
  for (const { operationId, responses } of operations) {
    for (const [status, response] of Object.entries(responses)) {
      if (Number(status) < 400) continue
      for (const code of listedCodes(response.description) ?? [])
        keys.push(answerKey(operationId, status, code))
    }
  }
  return keys
}

/**
 * Listed answers no test has to produce, each with why. None today: even 42901 (a rate limit of one
 * request), 50301 and 50001 (a store whose reads fail) are produced for every operation by
 * test/http/documented-errors.test.ts. A code goes here only when no test can reasonably make the
 * operation give it, and the reason says so.
 */
export const EXEMPT: ReadonlyMap<string, string> = new Map()

/** The listed answers no test received, in the document's order, less the exempt ones. */
export function unanswered(
  listed: Iterable<string>,
  answered: Iterable<string>,
  exempt: ReadonlyMap<string, string> = EXEMPT,
): string[] {
  const seen = new Set(answered)
  return [...new Set(listed)].filter((key) => !seen.has(key) && !exempt.has(key))
}

/**
 * Whether a run left tests out, so cannot hold them to the whole document. Files named on the command
 * line do not show in the project's config: such a run ran fewer files than the config includes.
 * Files left out with --exclude leave that count too, so a run given one is partial whatever it says.
 */
export function isPartialRun(run: {
  ran: number
  configured: number
  testNamePattern?: unknown
  cliExclude?: readonly string[]
}): boolean {
  return run.ran < run.configured || Boolean(run.testNamePattern) || (run.cliExclude?.length ?? 0) > 0
}
