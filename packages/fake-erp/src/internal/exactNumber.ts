/**
 * A JSON number the ERP writes exactly as `text`, digits and all: numbers beyond a double
 * (`12345678901234567890`) and decimals as a server wrote them (`1.10`, `1e2`, `-0.0`), which a float round trip
 * would change (docs/ARCHITECTURE.md, "Records").
 *
 * `JSON.stringify` writes it as `Number(text)`, the value a plain `JSON.parse` of the served body gives; only the
 * ERP's own serializer (`stringify`) writes the text.
 *
 * @internal
 */
export class ExactNumber {
  readonly _tag = "ExactNumber"
  constructor(readonly text: string) {}
  toJSON(): number {
    return Number(this.text)
  }
  toString(): string {
    return this.text
  }
}

/** @internal */
export const isExactNumber = (u: unknown): u is ExactNumber => u instanceof ExactNumber

// A private-use character around the text: no seeded string holds one, and JSON.stringify does not escape it.
const MARK = "\uE000"
const MARKED = /"\uE000([-+.0-9eE]+)\uE000"/g

/**
 * `JSON.stringify`, except that every `ExactNumber` is written as its text. The replacer sees each value before its
 * `toJSON` (as `this[key]`), marks the exact ones as strings, and the marks are then unquoted.
 *
 * @internal
 */
export const stringify = (value: unknown): string =>
  JSON.stringify(value, function(this: Record<string, unknown>, key: string, converted: unknown) {
    const raw = this[key]
    return raw instanceof ExactNumber ? `${MARK}${raw.text}${MARK}` : converted
  }).replace(MARKED, "$1")

/**
 * Whether a record holds an `ExactNumber` in one of its own fields (where the odd kinds put them).
 *
 * @internal
 */
export const holdsExact = (record: object): boolean => {
  for (const value of Object.values(record)) if (value instanceof ExactNumber) return true
  return false
}
