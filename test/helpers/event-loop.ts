/**
 * Runs `work` and counts the turns of the event loop taken meanwhile, as requests waiting on it
 * would: work that holds the loop from start to end lets none run.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<[T, number]> {
  let turns = 0
  let running = true
  const turn = () => {
    if (!running) return
    turns++
    setImmediate(turn)
  }
  setImmediate(turn)
  try {
    return [await work(), turns]
  } finally {
    running = false
  }
}
