import type { Counter, Histogram } from 'prom-client'

// prom-client's `metric.labels(...)` child hashes its label set again on every inc() and observe():
// on the request path that hashing cost more than the request's own metric work. A bound series is
// the metric's own entry for one label set, made once with the public zero() and then updated in
// place; the metric reads and exposes it as its own, so scrapes and the cluster merge are unchanged.
// It reaches into the entry prom-client keeps per label set (pinned in package-lock.json; the
// metrics tests read the exposed text, so a change of that layout fails them).

interface HistogramEntry {
  labels: Record<string, string>
  bucketValues: Record<number, number>
  sum: number
  count: number
}

interface CounterEntry {
  labels: Record<string, string>
  value: number
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key])
}

/** prom-client's own entry for a label set, if it has one. */
function findEntry<E extends { labels: Record<string, string> }>(
  metric: object,
  labels: Record<string, string>,
): E | undefined {
  const entries = Object.values((metric as { hashMap: Record<string, E> }).hashMap)
  return entries.find((candidate) => sameLabels(candidate.labels, labels))
}

function entryOf<E extends { labels: Record<string, string> }>(
  metric: object,
  labels: Record<string, string>,
): E {
  const entry = findEntry<E>(metric, labels)
  if (!entry) throw new Error('prom-client kept no series for the label set just zeroed')
  return entry
}

/** One series of `histogram`: observe() costs a bucket search and three additions. */
export function bindHistogram<L extends string>(
  histogram: Histogram<L>,
  labels: Record<L, string>,
): { observe(value: number): void } {
  // zero() would wipe a series already observed through prom-client's own API.
  if (!findEntry(histogram, labels)) histogram.zero(labels)
  const entry = entryOf<HistogramEntry>(histogram, labels)
  const bounds = (histogram as unknown as { upperBounds: number[] }).upperBounds
  return {
    observe(value) {
      entry.sum += value
      entry.count += 1
      for (const bound of bounds) {
        if (value <= bound) {
          entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + 1
          return
        }
      }
    },
  }
}

/** One series of `counter`: inc() is one addition. */
export function bindCounter<L extends string>(
  counter: Counter<L>,
  labels: Record<L, string>,
): { inc(): void } {
  counter.inc(labels, 0)
  const entry = entryOf<CounterEntry>(counter, labels)
  return {
    inc() {
      entry.value += 1
    },
  }
}
