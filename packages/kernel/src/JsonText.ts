/**
 * JSON text exactly as it was written: the records of a response body as the server sent them, numbers included.
 *
 * `JSON.parse` turns a number into a float, so text written back from the parsed value is not what the server sent:
 * `12345678901234567890` comes back as `12345678901234567000`, `9007199254740993` as `9007199254740992`, `1.10` as
 * `1.1`, `1e2` as `100`, `-0.0` as `0`; and an object's integer-like keys (`"10"`, `"2"`) move ahead of the others.
 * The functions here read the text itself (the scanner of `JsonScan`) and hand out pieces of it,
 * compacted (whitespace outside strings removed, so a record fits one NDJSON line) but otherwise as written: number
 * tokens, key order, repeated keys and string escapes. The values they stand for are those `JSON.parse` gives.
 *
 * Nothing here throws: text that is not JSON is a `Failure` naming the character where it stops being JSON; each
 * edition's `JsonText` turns it into its typed error. Any depth of nesting is read without recursion; every call is one
 * pass over its text.
 *
 * @since 0.1.0
 */
import * as Scan from "./JsonScan.js"

/**
 * Where (a character index into the text) and why a text is not JSON, or not of the shape asked for.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Failure {
  readonly position: number
  readonly reason: string
}

/**
 * What a reading gives: the value, or the failure.
 *
 * @since 0.1.0
 * @category Models
 */
export type Read<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly failure: Failure }

/**
 * The `data` of a response body as the server wrote it.
 *
 * @since 0.1.0
 * @category Models
 */
export interface DataText {
  /** The text of `data`, compact. */
  readonly data: string
  /** When `data` is an array: the text of each element, compact, in order; `undefined` otherwise. */
  readonly elements: ReadonlyArray<string> | undefined
}

/**
 * One member of an object, read from its text.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Member {
  /** The key, decoded (`"caf\u00e9"` is `café`). */
  readonly key: string
  /** The value's text as written, compact. */
  readonly json: string
  /**
   * The value as a table cell: a number's token as written (`1.10`, `12345678901234567890`), a string's decoded
   * value, `true` or `false`, an object or array as its compact JSON text; `null` for JSON `null`.
   */
  readonly cell: string | null
}

// A string token (validated before this runs) or a run of whitespace: `$1` keeps the string, drops the whitespace.
const STRING_OR_SPACE = /("[^"\\]*(?:\\.[^"\\]*)*")|[ \t\n\r]+/g

// The text of a valid JSON value without whitespace outside its strings.
const compactValid = (text: string): string => text.replace(STRING_OR_SPACE, "$1")

const ok = <A>(value: A): Read<A> => ({ ok: true, value })

const failed = (scanner: Scan.Scanner): Read<never> => ({ ok: false, failure: scanner.failure! })

const stop = (scanner: Scan.Scanner, expected: string) => {
  scanner.unexpected(expected)
  return failed(scanner)
}

const QUOTE = 34
const COMMA = 44
const COLON = 58
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const NULL = 110
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

// The text from `start` to the scanner's position, compacted when whitespace was skipped since `spaced` was reset.
const taken = (scanner: Scan.Scanner, start: number): string => {
  const text = scanner.text.slice(start, scanner.pos)
  return scanner.spaced ? compactValid(text) : text
}

/**
 * The text of one JSON value, compact (whitespace outside strings removed), otherwise as written; or why it is not
 * JSON. Whitespace around the value is allowed; anything else after it is not.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/kernel"
 *
 * // Whitespace goes; the numbers stay as written (JSON.parse reads 1500.5 and 12345678901234567000)
 * const text = JsonText.compact(`{ "id": 7, "credit_limit": 1500.50, "bank_account": 12345678901234567890 }`)
 * console.log(text.ok && text.value) // => {"id":7,"credit_limit":1500.50,"bank_account":12345678901234567890}
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const compact = (text: string): Read<string> => {
  const scanner = new Scan.Scanner(text)
  scanner.space()
  const start = scanner.pos
  scanner.spaced = false
  if (!scanner.value()) return failed(scanner)
  const value = taken(scanner, start)
  scanner.space()
  return scanner.pos < text.length ? stop(scanner, "the end of the text after the value") : ok(value)
}

// Reads an object's key and the colon after it; the decoded key, or `undefined` when the text is not JSON there.
const readKey = (scanner: Scan.Scanner): string | undefined => {
  scanner.space()
  const start = scanner.pos
  if (scanner.text.charCodeAt(start) !== QUOTE) {
    scanner.unexpected("a string key")
    return undefined
  }
  if (!scanner.string()) return undefined
  const key = Scan.stringValue(scanner.text, start, scanner.pos, scanner.escaped)
  if (!scanner.expect(COLON, "\":\" after a key")) return undefined
  scanner.space()
  return key
}

// Reads an object from its opening brace, handing each member's key to `member` with the scanner at its value, which
// `member` reads. Whether the object was read to its closing brace.
const readObject = (scanner: Scan.Scanner, member: (key: string) => boolean): boolean => {
  const text = scanner.text
  if (text.charCodeAt(scanner.pos) !== OPEN_BRACE) return scanner.unexpected("an object")
  scanner.pos++
  scanner.space()
  if (text.charCodeAt(scanner.pos) === CLOSE_BRACE) {
    scanner.pos++
    return true
  }
  for (;;) {
    const key = readKey(scanner)
    if (key === undefined || !member(key)) return false
    scanner.space()
    const next = text.charCodeAt(scanner.pos)
    scanner.pos++
    if (next === CLOSE_BRACE) return true
    if (next !== COMMA) {
      scanner.pos--
      return scanner.unexpected("\",\" or \"}\" in an object")
    }
  }
}

// Reads a whole text as one object (whitespace around it allowed).
const readWholeObject = (scanner: Scan.Scanner, member: (key: string) => boolean): boolean => {
  scanner.space()
  if (!readObject(scanner, member)) return false
  scanner.space()
  return scanner.pos < scanner.text.length ? scanner.unexpected("the end of the text after the object") : true
}

/**
 * The members of one object, from its text, in the order written (a repeated key appears each time; `JSON.parse`
 * keeps the last): for CSV and tables that must show numbers as the server wrote them.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/kernel"
 *
 * // A partner record as table cells, its numbers as the server wrote them
 * const cells = JsonText.members(`{"id":7,"company_name":"Kovács Kft.","credit_limit":1500.50,"fax":null}`)
 * if (cells.ok) for (const { cell, key } of cells.value) console.log(key, cell)
 * // => id 7
 * // => company_name Kovács Kft.
 * // => credit_limit 1500.50
 * // => fax null
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const members = (text: string): Read<ReadonlyArray<Member>> => {
  const scanner = new Scan.Scanner(text)
  const out: Array<Member> = []
  const read = readWholeObject(scanner, (key) => {
    const start = scanner.pos
    const first = text.charCodeAt(start)
    scanner.spaced = false
    if (!scanner.value()) return false
    const json = taken(scanner, start)
    out.push({
      key,
      json,
      cell: first === QUOTE ? Scan.stringValue(json, 0, json.length, scanner.escaped) : first === NULL ? null : json
    })
    return true
  })
  return read ? ok(out) : failed(scanner)
}

// The `data` member's value at the scanner's position: its text, and its elements' when it is an array.
const readData = (scanner: Scan.Scanner): DataText | undefined => {
  const text = scanner.text
  const start = scanner.pos
  scanner.spaced = false
  if (text.charCodeAt(start) !== OPEN_BRACKET) {
    return scanner.value() ? { data: taken(scanner, start), elements: undefined } : undefined
  }
  const elements: Array<string> = []
  let spaced = false
  scanner.pos++
  scanner.space()
  if (text.charCodeAt(scanner.pos) !== CLOSE_BRACKET) {
    for (;;) {
      spaced ||= scanner.spaced
      scanner.spaced = false
      const element = scanner.pos
      if (!scanner.value()) return undefined
      elements.push(taken(scanner, element))
      spaced ||= scanner.spaced
      scanner.spaced = false
      scanner.space()
      const next = text.charCodeAt(scanner.pos)
      scanner.pos++
      if (next === CLOSE_BRACKET) break
      if (next !== COMMA) {
        scanner.pos--
        scanner.unexpected("\",\" or \"]\" in an array")
        return undefined
      }
      scanner.space()
    }
  } else {
    scanner.pos++
  }
  spaced ||= scanner.spaced
  return { data: spaced ? `[${elements.join(",")}]` : text.slice(start, scanner.pos), elements }
}

// The scanner's reading of `dataText` (see there).
const scanData = (body: string): Read<DataText> => {
  const scanner = new Scan.Scanner(body)
  let found: DataText | undefined
  const read = readWholeObject(scanner, (key) => {
    if (key !== "data") return scanner.value()
    // A repeated key: the last one counts, as with JSON.parse.
    found = readData(scanner)
    return found !== undefined
  })
  if (!read) return failed(scanner)
  if (found === undefined) {
    scanner.pos = 0
    scanner.fail("the body has no \"data\"")
    return failed(scanner)
  }
  return ok(found)
}

// Number tokens that `JSON.stringify(JSON.parse(...))` writes differently, found where a value starts and ends (after
// `:`, `,` or `[`, before `,`, `}` or `]`): an exponent; a fraction ending in 0 (`1.10`, `-0.0`); `-0`; 16 or more
// digits (past what a float holds for certain); below 1e-6 (written with an exponent). Inside strings it may match
// too, which only makes the answer `false`.
const CHANGED_NUMBER_TOKEN = "[ \\t\\n\\r]*(?:-0|-?(?:\\d+(?:\\.\\d+)?[eE][+-]?\\d+|\\d+\\.\\d*0|" +
  "(?=[\\d.]{16})\\d+(?:\\.\\d+)?|0\\.0{6}\\d*))[ \\t\\n\\r]*"
const CHANGED_NUMBER = new RegExp(`[:,[]${CHANGED_NUMBER_TOKEN}[,}\\]]`)
// The same for a text that is one number.
const CHANGED_NUMBER_ALONE = new RegExp(`^${CHANGED_NUMBER_TOKEN}$`)
// A key of digits only: JSON.parse puts integer-like keys first, in numeric order.
const INTEGER_KEY = /"\d+"[ \t\n\r]*:/
// Escapes JSON.stringify writes otherwise (`\/`, `\u00e9`, `\u0041`).
const REWRITTEN_ESCAPE = /\\[u/]/

// A UTF-16 surrogate without its pair, which JSON.stringify writes as an escape (String#isWellFormed is ES2024, past
// the ES2022 library of these packages).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const isWellFormed = (text: string): boolean => !LONE_SURROGATE.test(text)

/**
 * Whether `JSON.stringify(JSON.parse(text))` writes every number token, key order and string of `text` as written,
 * apart from whitespace; `false` when it may not (a number a float changes, an integer-like key, a `\/` or `\uXXXX`
 * escape, a lone surrogate). A few regular-expression passes; it may say `false` for a text that would come back the
 * same (it looks inside strings too), never `true` for one that would not, except for a repeated key (`JSON.parse`
 * keeps the last).
 *
 * Not a shortcut for exact output: reading the text (`dataText`) costs no more than this check, so the client's exact
 * mode always reads it; this is for a caller that holds parsed values and wants to know whether writing them back is
 * faithful.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/kernel"
 *
 * // Would JSON.stringify(JSON.parse(text)) write this record as the server did?
 * console.log(JsonText.isPlain(`{"id":7,"company_name":"Kovács Kft."}`)) // => true
 * console.log(JsonText.isPlain(`{"id":7,"credit_limit":1500.50}`)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const isPlain = (text: string): boolean =>
  !CHANGED_NUMBER.test(text) && !CHANGED_NUMBER_ALONE.test(text) && !INTEGER_KEY.test(text) &&
  !REWRITTEN_ESCAPE.test(text) && isWellFormed(text)

/**
 * The `data` of a response body (`{ "result": …, "data": … }`) as the server wrote it: its text, and when it is an
 * array, the text of each element (one record each), all compact but otherwise as sent. A repeated `data` key counts
 * once, the last time, as with `JSON.parse`. One pass over the body.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/kernel"
 *
 * // The records of a partner/list body as the server wrote them: one NDJSON line each
 * const body = `{"result":{"code":1,"message":null},"data":[{"id":7, "credit_limit":1500.50}, {"id":8}]}`
 * const read = JsonText.dataText(body)
 * console.log(read.ok && read.value.elements) // => [ '{"id":7,"credit_limit":1500.50}', '{"id":8}' ]
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const dataText = (body: string): Read<DataText> => scanData(body)

/**
 * The body a POST sends: a value as `JSON.stringify` writes it, or JSON text as it is (checked, so nothing else goes
 * out: `12345678901234567890` and `1.10` stay so), or none; `reason` when `json` is not JSON (the request is refused,
 * not sent).
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/kernel"
 *
 * console.log(JsonText.requestBody({ json: `{"amount":1.10}` })) // => { ok: true, value: '{"amount":1.10}' }
 * console.log(JsonText.requestBody({ body: { amount: 1.1 } })) // => { ok: true, value: '{"amount":1.1}' }
 * console.log(JsonText.requestBody({ json: "{" }).ok) // => false
 * ```
 *
 * @since 0.1.0
 * @category Writing
 */
export const requestBody = (
  options: { readonly body?: unknown; readonly json?: string | undefined } | undefined
): { readonly ok: true; readonly value: string | undefined } | { readonly ok: false; readonly reason: string } => {
  if (options?.json === undefined) {
    return { ok: true, value: options?.body === undefined ? undefined : JSON.stringify(options.body) }
  }
  const checked = compact(options.json)
  return checked.ok
    ? { ok: true, value: options.json }
    : {
      ok: false,
      reason: `the body is not JSON: ${checked.failure.reason} (character ${checked.failure.position})`
    }
}
