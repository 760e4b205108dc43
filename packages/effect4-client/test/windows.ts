/** The most starts found in any closed interval of length `window` (what a server with any window alignment sees). */
export const maxInAnyWindow = (starts: ReadonlyArray<number>, window: number): number => {
  const sorted = [...starts].sort((a, b) => a - b)
  let best = 0
  let lo = 0
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! > window) lo++
    best = Math.max(best, hi - lo + 1)
  }
  return best
}
