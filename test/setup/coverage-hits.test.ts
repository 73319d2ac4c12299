import { describe, expect, it } from 'vitest'
import { addHits, type FileData, type Range, type Tally } from './coverage-hits.js'

// The coverage provider counts spawned processes' coverage into the run's own (test/setup): these
// are the rules by which a hit in the build's conversion finds the run's entry for the same code.

const range = (line: number, column: number, endLine: number, endColumn: number): Range => ({
  start: { line, column },
  end: { line: endLine, column: endColumn },
})

function file(statements: Range[], counts: number[] = statements.map(() => 0)): FileData {
  return {
    statementMap: Object.fromEntries(statements.map((r, i) => [String(i), r])),
    s: Object.fromEntries(counts.map((c, i) => [String(i), c])),
    fnMap: {},
    f: {},
    branchMap: {},
    b: {},
  }
}

describe('counting a spawned process hits into the run’s coverage', () => {
  it('adds a hit to the entry that begins where the child’s does', () => {
    const own = file([range(3, 2, 3, 20), range(4, 2, 4, 9)], [1, 0])
    const tally: Tally = { hits: 0, matched: 0 }
    addHits(own, file([range(3, 2, 3, 19), range(4, 2, 4, 9)], [0, 5]), tally)
    expect(own.s).toEqual({ 0: 1, 1: 5 })
    expect(tally).toEqual({ hits: 1, matched: 1 })
  })

  it('matches by where an entry ends when it begins elsewhere, and by its lines after that', () => {
    // vitest's transform of `export const x = …` begins before the build's, and ends the line.
    const own = file([range(7, 6, 9, 2), range(12, 6, 12, Number.POSITIVE_INFINITY), range(12, 29, 12, 40)])
    const tally: Tally = { hits: 0, matched: 0 }
    addHits(own, file([range(7, 13, 9, 2), range(12, 14, 12, 54)], [2, 3]), tally)
    // 12:14 spans line 12 alone: the nearest entry before it on that line is 12:6, not 12:29.
    expect(own.s).toEqual({ 0: 2, 1: 3, 2: 0 })
    expect(tally).toEqual({ hits: 2, matched: 2 })
  })

  it('never adds an entry, and counts what it could not place', () => {
    const own = file([range(1, 0, 1, 10), range(1, 0, 1, 10)])
    const tally: Tally = { hits: 0, matched: 0 }
    // Two entries share both positions, and nothing else begins on line 5.
    addHits(own, file([range(1, 0, 1, 10), range(5, 0, 5, 3)], [1, 1]), tally)
    expect(Object.keys(own.statementMap)).toHaveLength(2)
    expect(own.s).toEqual({ 0: 0, 1: 0 })
    expect(tally).toEqual({ hits: 2, matched: 0 })
  })

  it('adds functions by their declaration and branches arm by arm, of the same kind only', () => {
    const own: FileData = {
      ...file([]),
      fnMap: { 0: { decl: range(2, 9, 2, 14), loc: range(2, 17, 6, 1) } },
      f: { 0: 0 },
      branchMap: {
        0: { loc: range(3, 2, 5, 3), type: 'if', locations: [range(3, 2, 5, 3), range(3, 2, 5, 3)] },
        1: {
          loc: range(4, 4, 4, 20),
          type: 'binary-expr',
          locations: [range(4, 4, 4, 9), range(4, 13, 4, 20)],
        },
      },
      b: { 0: [1, 0], 1: [0, 0] },
    }
    // The same code as the run's, counted again; only the binary expression's place now holds
    // another kind of branch, which is not the same code.
    const child: FileData = { ...structuredClone(own), f: { 0: 4 }, b: { 0: [2, 3], 1: [1, 1] } }
    const other = child.branchMap[1]
    if (other) other.type = 'cond-expr'
    const tally: Tally = { hits: 0, matched: 0 }
    addHits(own, child, tally)
    expect(own.f).toEqual({ 0: 4 })
    expect(own.b).toEqual({ 0: [3, 3], 1: [0, 0] })
    expect(tally).toEqual({ hits: 3, matched: 2 })
  })
})
