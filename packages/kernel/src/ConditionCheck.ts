/**
 * Whether the records a list served under `list_condition[field]=value` satisfy it (docs/paging.md, "Conditions
 * checked against the records"): a server that does not know a condition, or does not apply it, answers with the
 * whole list, which would otherwise pass for the filtered one. Each edition's `ListEndpoint` fails the list with its
 * `ConditionIgnored` at the first record that does not.
 *
 * The contract says only that a condition filters on a record field (docs/erp-api-v2.md, "GET {base_url}/partner/list"),
 * not how a value is compared, so the check is meant to catch a condition left unapplied, not to judge how a server
 * matches: a record fails it only when its value clearly differs from the value asked. Each record's value is compared
 * with the text sent (`ListQuery.conditionValue`):
 *
 * - a field the record does not carry fails;
 * - a number: numerically; a value asked with more digits than a double holds (16 or more) by the digits the server
 *   wrote, when its text is at hand (`12345678901234567891` is not `12345678901234567890`, though a double holds both
 *   alike); against text that is not a number, as text (below);
 * - a boolean: `true` is a nonzero number or `true`, `false` is zero, `false` or empty (the contract sends `1` / `0`);
 * - `null`: empty, `0`, `false` or `null`;
 * - a string: equal; equal or contained once case, accents and surrounding spaces are set aside (a server comparing
 *   with a collation, or with `LIKE '%value%'`); or the same number (`"001"` and `1`);
 * - an array: when one of its elements is; an object, or a record that is not an object: not judged.
 *
 * @since 0.1.0
 */
import * as JsonText from "./JsonText.js"
import { type Conditions, conditionValue } from "./ListQuery.js"
import { recordIdOf } from "./Page.js"

/**
 * A record that does not satisfy a condition it was served under.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Mismatch {
  /** The condition's field. */
  readonly field: string
  /** The value asked, as it was sent (`ListQuery.conditionValue`: `true` is `1`). */
  readonly asked: string
  /**
   * The record's value of the field as the server wrote it (JSON text: a string quoted), cut to `HAD_MAX` characters;
   * `undefined` when the record has no such field.
   */
  readonly had: string | undefined
}

/**
 * A mismatch in a page: where the record was in the whole list, and its `id` when it has one (as the server wrote it
 * when a double would name it by a neighbour's value: `Page.recordIdOf`).
 *
 * @since 0.1.0
 * @category Models
 */
export interface PageMismatch extends Mismatch {
  readonly offset: number
  readonly recordId: unknown
}

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
 * import { ConditionCheck } from "@erp-client/kernel"
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
 * import { ConditionCheck } from "@erp-client/kernel"
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

type Prepared = ReadonlyArray<readonly [field: string, asked: Asked]>

const prepare = (where: Conditions): Prepared =>
  Object.entries(where).map(([field, condition]) => [field, askedOf(conditionValue(condition))] as const)

const checkPrepared = (conditions: Prepared, record: unknown, json: string | undefined): Mismatch | undefined => {
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

/**
 * A page as the check reads it: each edition's `Page.Page` is one. Valid records (`raw`, with `json` when exact) fill
 * the positions the invalid ones (each with its offset) leave.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Page {
  readonly offset: number
  readonly received: number
  readonly raw: ReadonlyArray<unknown>
  readonly json?: ReadonlyArray<string> | undefined
  readonly invalid: ReadonlyArray<
    { readonly offset: number; readonly raw: unknown; readonly json?: string | undefined }
  >
}

/**
 * The first record of a page (in the server's order, valid or not) that does not satisfy `where`, with its offset and
 * id; `undefined` when every record does, or there is no condition. One pass; a record's text is scanned only for a
 * number a double cannot settle, or to quote the value of the record that fails.
 *
 * @example
 * ```ts
 * import { ConditionCheck } from "@erp-client/kernel"
 *
 * // A server that ignored list_condition[is_customer]=1 answered the page at offset 100 with the whole list
 * const page = { offset: 100, received: 2, raw: [{ id: 101, is_customer: 1 }, { id: 102, is_customer: 0 }], invalid: [] }
 * console.log(ConditionCheck.checkPage({ is_customer: 1 }, page))
 * // => {
 * //   field: 'is_customer',
 * //   asked: '1',
 * //   had: '0',
 * //   offset: 101,
 * //   recordId: 102
 * // }
 * ```
 *
 * @since 0.1.0
 * @category Checks
 */
export const checkPage = (where: Conditions | undefined, page: Page): PageMismatch | undefined => {
  if (where === undefined) return undefined
  const conditions = prepare(where)
  if (conditions.length === 0) return undefined
  const invalidAt = new Map(page.invalid.map((record) => [record.offset - page.offset, record]))
  let valid = 0
  for (let position = 0; position < page.received; position++) {
    const invalid = invalidAt.get(position)
    let raw: unknown
    let json: string | undefined
    if (invalid === undefined) {
      raw = page.raw[valid]
      json = page.json?.[valid]
      valid++
    } else {
      raw = invalid.raw
      json = invalid.json
    }
    const mismatch = checkPrepared(conditions, raw, json)
    if (mismatch !== undefined) {
      return { ...mismatch, offset: page.offset + position, recordId: recordIdOf(raw, json) }
    }
  }
  return undefined
}
