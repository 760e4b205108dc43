// What an export under change wrote, held to the list it read: the drift tests of both editions (Drift.test.ts) and the
// Effect 3 edition's export against the changing sandbox (DriftSandbox.test.ts).

/** Duplicates among `emitted`, and records present from start to end that never came out. */
export const audit = (emitted: ReadonlyArray<number>, initial: ReadonlySet<number>, final: ReadonlyArray<number>) => {
  const once = new Set(emitted)
  const survivors = final.filter((id) => initial.has(id))
  return {
    duplicates: emitted.length - once.size,
    skipped: survivors.filter((id) => !once.has(id)).length,
    // Survivors must come out in list order (inserts and deletes do not reorder the others); an inserted record
    // comes out wherever the export met it.
    inOrder: (() => {
      const position = new Map(survivors.map((id, i) => [id, i]))
      const seen = emitted.filter((id) => position.has(id)).map((id) => position.get(id)!)
      return seen.every((p, i) => i === 0 || seen[i - 1] < p)
    })()
  }
}
