/**
 * A name as search compares it: Unicode lower case, so that `ölb` finds `Ölbaum` and `σίγμα` finds
 * `ΣΊΓΜΑ`, with accents kept (`ölb` does not find `OLBAUM`). Composed to NFC first, so that a name
 * typed with combining marks matches the same name typed precomposed. Final sigma folds to σ, as
 * Unicode case folding has it: lower-casing alone keeps the ς of a word's end.
 *
 * Both stores keep each plant's folded name beside it and compare folded text, so that they agree
 * with each other whatever their own collation or `lower()` would do.
 */
export function foldName(text: string): string {
  return text.normalize('NFC').toLowerCase().replaceAll('ς', 'σ')
}
