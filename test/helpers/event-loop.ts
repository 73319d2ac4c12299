/**
 * Runs `work` and, at every turn of the event loop taken meanwhile, reads `probe`: what a request
 * waiting on the loop would see. Work that holds the loop from start to end lets no turn see it half
 * done. Counting the turns alone would not tell: under load a chunk's rest can run out while the loop
 * is elsewhere, so two chunks may come between two turns, and three chunks be seen by one turn only.
 */
export async function seenDuring<T, V>(work: () => Promise<T>, probe: () => V): Promise<[T, V[]]> {
  const seen: V[] = []
  let running = true
  const turn = () => {
    if (!running) return
    seen.push(probe())
    setImmediate(turn)
  }
  setImmediate(turn)
  try {
    return [await work(), seen]
  } finally {
    running = false
  }
}
