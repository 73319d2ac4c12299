// Adds the hits of one conversion of V8 coverage to another's Istanbul counts of the same sources.

export interface Position {
  line: number
  column: number
}
export interface Range {
  start: Position
  end: Position
}
/** One source file's Istanbul coverage: what there is to cover, and how often each part ran. */
export interface FileData {
  statementMap: Record<string, Range>
  s: Record<string, number>
  fnMap: Record<string, { decl: Range; loc: Range }>
  f: Record<string, number>
  branchMap: Record<string, { loc: Range; type: string; locations: Range[] }>
  b: Record<string, number[]>
}

/**
 * Adds what `child` counted to the entries of `own` that are the same code. The two conversions
 * start from different JavaScript (the build's and vitest's transform of the same source), so an
 * entry may begin a few columns apart in each (vitest's transform rewrites `export const`, an arrow
 * function's parameters); it is then matched by where it ends, or else by the lines it spans.
 */
export function addHits(own: FileData, child: FileData, tally: Tally): void {
  const statement = finder(own.statementMap, (range) => range)
  for (const [key, range] of Object.entries(child.statementMap)) {
    add(own.s, statement(range), child.s[key] ?? 0, tally)
  }
  const fn = finder(own.fnMap, (entry) => ({ start: entry.decl.start, end: entry.loc.end }))
  for (const [key, entry] of Object.entries(child.fnMap)) {
    add(own.f, fn(entry), child.f[key] ?? 0, tally)
  }
  const branch = finder(
    own.branchMap,
    (entry) => entry.loc,
    (entry) => `${entry.type} ${entry.locations.length}`,
  )
  for (const [key, entry] of Object.entries(child.branchMap)) {
    const counts = child.b[key] ?? []
    if (!counts.some((count) => count > 0)) continue
    tally.hits++
    const target = branch(entry)
    const ownCounts = target === undefined ? undefined : own.b[target]
    if (ownCounts === undefined) continue
    tally.matched++
    counts.forEach((count, i) => {
      ownCounts[i] = (ownCounts[i] ?? 0) + count
    })
  }
}

/** Of the entries the child ran, how many were found in the run's own map. */
export interface Tally {
  hits: number
  matched: number
}

function add(counts: Record<string, number>, target: string | undefined, count: number, tally: Tally): void {
  if (count === 0) return
  tally.hits++
  if (target === undefined) return
  tally.matched++
  counts[target] = (counts[target] ?? 0) + count
}

const at = (position: Position) => `${position.line}:${position.column}`

/**
 * Looks an entry up among `entries` of the same shape: by where it begins, else by where it ends (a
 * position two entries share finds neither), else the entry that spans the same lines and begins
 * nearest before it on its first line, if only one does (vitest's transform maps some declarations
 * only to whole lines).
 */
function finder<T>(
  entries: Record<string, T>,
  rangeOf: (entry: T) => Range,
  shapeOf: (entry: T) => string = () => '',
): (entry: T) => string | undefined {
  const byStart = new Map<string, string | null>()
  const byEnd = new Map<string, string | null>()
  const byLines = new Map<string, { id: string; column: number }[]>()
  const unique = (index: Map<string, string | null>, key: string, id: string) =>
    index.set(key, index.has(key) ? null : id)
  for (const [id, entry] of Object.entries(entries)) {
    const { start, end } = rangeOf(entry)
    const shape = shapeOf(entry)
    unique(byStart, `${shape} ${at(start)}`, id)
    unique(byEnd, `${shape} ${at(end)}`, id)
    const lines = `${shape} ${start.line}-${end.line}`
    byLines.set(lines, [...(byLines.get(lines) ?? []), { id, column: start.column }])
  }
  return (entry) => {
    const { start, end } = rangeOf(entry)
    const shape = shapeOf(entry)
    const found = byStart.get(`${shape} ${at(start)}`) ?? byEnd.get(`${shape} ${at(end)}`)
    if (found) return found
    const before = (byLines.get(`${shape} ${start.line}-${end.line}`) ?? []).filter(
      (candidate) => candidate.column <= start.column,
    )
    const column = Math.max(...before.map((candidate) => candidate.column))
    const nearest = before.filter((candidate) => candidate.column === column)
    return nearest.length === 1 ? nearest[0]?.id : undefined
  }
}
