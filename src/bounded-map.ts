/**
 * Sets `key` to `value` as the newest entry of `map` (a Map keeps the order entries were set in), and
 * drops the oldest while it holds more than `max`: a memory of tokens, keys or windows that cannot
 * grow without bound however many a client invents.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) {
    const oldest = map.keys().next().value
    if (oldest !== undefined) map.delete(oldest)
  }
}
