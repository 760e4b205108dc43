/**
 * "Did you mean": the names nearest a mistyped flag or command, among the real ones of that command.
 */

/**
 * The edits from `a` to `b`, a swap of two neighbours counted as one (`--fromat` is one edit from `--format`), case
 * aside (the parser compares names without regard to case).
 */
export const distance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  // Three rows of the table: two back for a swap.
  let before: Array<number> = []
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const current = [i]
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, before[j - 2]! + 1)
      current.push(best)
    }
    before = previous
    previous = current
  }
  return previous[t.length]!
}

// A name without its dashes and any `=value`: `--formt=csv` is `formt`.
const bare = (name: string): string => name.replace(/^-+/, "").replace(/=.*$/, "")

/**
 * The candidates nearest `typed`, if any is near enough to be what was meant: one edit for a name of up to 5
 * characters, two for a longer one, none for 1 or 2 (every short name is near every other). Dashes are set aside, so
 * `--p` finds `-p`. Several only when equally near, in the order given.
 */
export const nearest = (typed: string, candidates: ReadonlyArray<string>): ReadonlyArray<string> => {
  const name = bare(typed)
  const allowed = name.length <= 2 ? 0 : name.length <= 5 ? 1 : 2
  let best = allowed + 1
  let found: Array<string> = []
  for (const candidate of new Set(candidates)) {
    const d = distance(name, bare(candidate))
    if (d < best) {
      best = d
      found = [candidate]
    } else if (d === best) found.push(candidate)
  }
  return best <= allowed && name !== "" ? found : []
}
