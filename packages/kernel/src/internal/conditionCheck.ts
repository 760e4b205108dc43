/**
 * How `ConditionCheck` compares a record's value with a condition's (the rules: docs/paging.md, "Conditions checked
 * against the records"): the comparison (`satisfies`), one record (`checkRecord`), and the conditions read once for a
 * page (`prepare`, `checkPrepared`).
 */
import type { Mismatch } from "../ConditionCheck.js"
import * as JsonText from "../JsonText.js"
import { type Conditions, conditionValue } from "../ListQuery.js"

/**
 * The most characters of a record's value a `Mismatch` keeps (`…` marks a cut): enough to see it, never a whole
 * document of a field.
 *
 * @since 0.1.0
 * @category Constants
 */
export const HAD_MAX = 200

// A decimal number as text: a sign, its significant digits (no leading or trailing zeros; "" for zero) and the power of
// ten of the last one. Two texts are the same number exactly when these are equal.
interface Decimal {
  readonly negative: boolean
  readonly digits: string
  readonly exponent: bigint
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/

// Number text as a JSON token or a condition writes it (`1`, `-0.50`, `1e3`, `+2`, `.5`); `undefined` for anything
// else (`0x10`, `Infinity`, `1,5`), which is compared as text.
const decimalOf = (text: string): Decimal | undefined => {
  const match = DECIMAL.exec(text.trim())
  if (match === null) return undefined
  const whole = match[2] ?? ""
  const fraction = match[3] ?? ""
  if (whole === "" && fraction === "") return undefined
  let digits = (whole + fraction).replace(/^0+/, "")
  let exponent = BigInt(match[4] ?? "0") - BigInt(fraction.length)
  const trailing = digits.length - digits.replace(/0+$/, "").length
  digits = digits.slice(0, digits.length - trailing)
  exponent += BigInt(trailing)
  return digits === ""
    ? { negative: false, digits: "", exponent: 0n }
    : { negative: match[1] === "-", digits, exponent }
}

const sameDecimal = (a: Decimal, b: Decimal): boolean =>
  a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent

// Text as a lenient server may compare it: accents, case and surrounding spaces set aside.
const fold = (text: string): string => text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().trim()

// A value asked, read once for every record it is compared with.
interface Asked {
  readonly text: string
  readonly folded: string
  /** As a decimal number, when it is one. */
  readonly decimal: Decimal | undefined
  /** As a double (`NaN` when it is no number). */
  readonly number: number
  /**
   * At most 15 significant digits: two such decimals never share a double, so a double equal to it is the same
   * number, whatever token the server wrote for it (bar digits past what a double holds, which a server comparing
   * numbers does not see either).
   */
  readonly short: boolean
}

const askedOf = (text: string): Asked => {
  const decimal = decimalOf(text)
  return {
    text,
    folded: fold(text),
    decimal,
    number: decimal === undefined ? Number.NaN : Number(text.trim()),
    short: decimal !== undefined && decimal.digits.length <= 15
  }
}

const textSatisfies = (asked: Asked, text: string): boolean => {
  if (text === asked.text) return true
  const folded = fold(text)
  if (folded === asked.folded || folded.includes(asked.folded)) return true
  const decimal = asked.decimal === undefined ? undefined : decimalOf(text)
  return decimal !== undefined && sameDecimal(asked.decimal!, decimal)
}

const satisfiesAsked = (asked: Asked, value: unknown, token?: () => string | undefined): boolean => {
  switch (typeof value) {
    case "undefined":
      return false
    case "string":
      return textSatisfies(asked, value)
    case "number": {
      if (asked.decimal === undefined) return textSatisfies(asked, String(value))
      // Decimals that differ as doubles differ as decimals; equal doubles may still hide different digits.
      if (asked.number !== value) return false
      if (asked.short) return true
      const written = token?.()
      const exact = written === undefined ? undefined : decimalOf(written)
      return exact === undefined || sameDecimal(asked.decimal, exact)
    }
    case "boolean":
      if (asked.decimal !== undefined) return value === (asked.decimal.digits !== "")
      return value ? asked.folded === "true" : asked.folded === "false" || asked.folded === ""
    default:
      if (value === null) {
        return asked.folded === "" || asked.folded === "null" || asked.folded === "false" ||
          asked.decimal?.digits === ""
      }
      if (Array.isArray(value)) return value.some((element) => satisfiesAsked(asked, element))
      return true
  }
}

/**
 * Whether a record's value of a field satisfies a condition, `asked` as it was sent: see the module's rules. `token`
 * gives the number's text as the server wrote it, when at hand; it is read only when the parsed double alone cannot
 * tell (the value asked has more digits than a double always holds).
 *
 * @example
 * ```ts
 * import * as ConditionCheck from "./conditionCheck.js"
 *
 * console.log(ConditionCheck.satisfies("1", 1), ConditionCheck.satisfies("1", "1"), ConditionCheck.satisfies("1", true))
 * // => true true true
 * console.log(ConditionCheck.satisfies("1", 0), ConditionCheck.satisfies("Kovács", "KOVACS Kft."))
 * // => false true
 * // Digits a double cannot hold, told apart by the text the server wrote
 * const served = Number("12345678901234567890")
 * console.log(ConditionCheck.satisfies("12345678901234567891", served, () => "12345678901234567890")) // => false
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const satisfies = (asked: string, value: unknown, token?: () => string | undefined): boolean =>
  satisfiesAsked(askedOf(asked), value, token)

const cut = (text: string): string => text.length <= HAD_MAX ? text : `${text.slice(0, HAD_MAX - 1)}…`

// The text of `field`'s value in a record's text, as written (the last one when the key repeats, as JSON.parse keeps).
const memberText = (json: string | undefined, field: string): string | undefined => {
  if (json === undefined) return undefined
  const members = JsonText.members(json)
  if (!members.ok) return undefined
  let text: string | undefined
  for (const member of members.value) if (member.key === field) text = member.json
  return text
}

/**
 * The first condition (in the order given) a record does not satisfy, or `undefined`. `json` is the record's text as
 * the server wrote it, when at hand: a number is then compared to its digits, and `had` quotes it as written. A
 * record that is not an object is not judged (`undefined`): it is a record a schema fails, not one a condition can.
 *
 * @example
 * ```ts
 * import * as ConditionCheck from "./conditionCheck.js"
 *
 * console.log(ConditionCheck.checkRecord({ is_customer: 1 }, { id: 4, is_customer: 0 }))
 * // => { field: 'is_customer', asked: '1', had: '0' }
 * console.log(ConditionCheck.checkRecord({ nonexistent_field: 1 }, { id: 1 }))
 * // => { field: 'nonexistent_field', asked: '1', had: undefined }
 * console.log(ConditionCheck.checkRecord({ is_customer: true }, { id: 7, is_customer: "1" })) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkRecord = (where: Conditions, record: unknown, json?: string): Mismatch | undefined =>
  checkPrepared(prepare(where), record, json)

export type Prepared = ReadonlyArray<readonly [field: string, asked: Asked]>

export const prepare = (where: Conditions): Prepared =>
  Object.entries(where).map(([field, condition]) => [field, askedOf(conditionValue(condition))] as const)

export const checkPrepared = (
  conditions: Prepared,
  record: unknown,
  json: string | undefined
): Mismatch | undefined => {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return undefined
  for (const [field, asked] of conditions) {
    // Any name a condition gives is read as the record's own property, never an inherited one.
    if (!Object.hasOwn(record, field)) return { field, asked: asked.text, had: undefined }
    const value: unknown = Reflect.get(record, field)
    if (!satisfiesAsked(asked, value, () => memberText(json, field))) {
      return { field, asked: asked.text, had: cut(memberText(json, field) ?? JSON.stringify(value)) }
    }
  }
  return undefined
}
