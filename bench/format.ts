/** A figure as the report prints it: thousands separated, at most `digits` decimals. */
export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits })
