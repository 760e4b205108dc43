/**
 * A JSON scanner that finds where values start and end in the text, without building them: what `JsonText` needs to
 * hand out records exactly as the server wrote them, and what a program that reads records from their text itself
 * uses (the command line's `erp api infer` drafts a schema from number tokens as the server wrote them).
 *
 * Why by hand: `JSON.parse` gives values, not their text, and a number's value is not its text
 * (`12345678901234567890` parses to `12345678901234567000`, `1.10` to `1.1`); the reviver's `context.source` is not
 * available on every Node version these packages support.
 *
 * The grammar is RFC 8259's, as strict as `JSON.parse` (no comments, no trailing commas, no leading zeros, no raw
 * control characters in strings, only space, tab, CR and LF as whitespace). Nesting is followed with an explicit stack,
 * never recursion, so any depth costs memory in proportion, never the call stack; every step moves forward, so any
 * input ends in one pass. Failures are values (`Failure`): the scanner never throws.
 *
 * @since 0.1.0
 */

/**
 * Why and where a text is not JSON: a scanner's `failure` after a read returned `false`.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Failure {
  readonly position: number
  readonly reason: string
}

const QUOTE = 34 // "
const BACKSLASH = 92 // \
const COMMA = 44 // ,
const COLON = 58 // :
const OPEN_BRACE = 123 // {
const CLOSE_BRACE = 125 // }
const OPEN_BRACKET = 91 // [
const CLOSE_BRACKET = 93 // ]
const MINUS = 45 // -
const ZERO = 48
const NINE = 57

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9
const isDigit = (c: number) => c >= ZERO && c <= NINE
const isHex = (c: number) => (c >= ZERO && c <= NINE) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)
// After a backslash: " \ / b f n r t.
const isShortEscape = (c: number) =>
  c === QUOTE || c === BACKSLASH || c === 47 || c === 98 || c === 102 || c === 110 || c === 114 || c === 116

const describe = (text: string, i: number): string => i >= text.length ? "the end of the text" : JSON.stringify(text[i])

/**
 * A cursor over one text. Each method reads one piece at `pos` and moves past it, or records `failure` and returns
 * `false`. `spaced` turns true when whitespace was skipped: the value read since it was reset is not compact.
 *
 * @example
 * ```ts
 * import { JsonScan } from "@erp-client/kernel"
 *
 * const scanner = new JsonScan.Scanner(`{"id": 12345678901234567890}`)
 * console.log(scanner.value(), scanner.pos, scanner.spaced) // => true 29 true
 * ```
 *
 * @since 0.1.0
 * @category Scanning
 */
export class Scanner {
  /**
   * Where the next read starts: an index into `text`.
   *
   * @since 0.1.0
   */
  pos = 0
  /**
   * Whether whitespace was skipped since it was last reset.
   *
   * @since 0.1.0
   */
  spaced = false
  /**
   * Why the last read failed, once one has.
   *
   * @since 0.1.0
   */
  failure: Failure | undefined = undefined
  /**
   * Set by `string`: whether the last string read holds an escape (its text is then not its value).
   *
   * @since 0.1.0
   */
  escaped = false

  constructor(readonly text: string) {}

  /**
   * Records `failure`, with `reason`, at `pos`.
   *
   * @since 0.1.0
   */
  fail(reason: string): false {
    this.failure = { position: this.pos, reason }
    return false
  }

  /**
   * Records `failure` at `pos`: `expected` was expected, and says what was found.
   *
   * @since 0.1.0
   */
  unexpected(expected: string): false {
    return this.fail(`expected ${expected}, found ${describe(this.text, this.pos)}`)
  }

  /**
   * Skips whitespace.
   *
   * @since 0.1.0
   */
  space(): void {
    const text = this.text
    let i = this.pos
    while (i < text.length && isSpace(text.charCodeAt(i))) i++
    if (i !== this.pos) {
      this.spaced = true
      this.pos = i
    }
  }

  /**
   * Reads `c` after optional whitespace.
   *
   * @since 0.1.0
   */
  expect(c: number, expected: string): boolean {
    this.space()
    if (this.text.charCodeAt(this.pos) !== c) return this.unexpected(expected)
    this.pos++
    return true
  }

  /**
   * Reads a string token; `pos` is at its opening quote.
   *
   * @since 0.1.0
   */
  string(): boolean {
    const text = this.text
    const length = text.length
    let escaped = false
    let i = this.pos + 1
    // A loop over char codes: most strings of a record are short, where a regular expression's call costs more.
    while (i < length) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        this.pos = i + 1
        this.escaped = escaped
        return true
      }
      if (c === BACKSLASH) {
        const e = text.charCodeAt(i + 1)
        if (e === 117) { // u
          if (
            !isHex(text.charCodeAt(i + 2)) || !isHex(text.charCodeAt(i + 3)) ||
            !isHex(text.charCodeAt(i + 4)) || !isHex(text.charCodeAt(i + 5))
          ) {
            this.pos = i
            return this.fail("\\u in a string is not followed by four hexadecimal digits")
          }
          i += 6
        } else if (isShortEscape(e)) {
          i += 2
        } else {
          this.pos = i
          return this.fail("a backslash in a string starts no valid escape")
        }
        escaped = true
        continue
      }
      if (c < 0x20) {
        this.pos = i
        return this.fail(`a control character (U+${c.toString(16).padStart(4, "0")}) in a string must be escaped`)
      }
      i++
    }
    this.pos = i
    return this.fail("the text ends inside a string")
  }

  /**
   * Reads a number token: `-? (0 | [1-9] digits) (. digits)? ([eE] [+-]? digits)?`.
   *
   * @since 0.1.0
   */
  number(): boolean {
    const text = this.text
    let i = this.pos
    if (text.charCodeAt(i) === MINUS) i++
    const first = text.charCodeAt(i)
    if (first === ZERO) i++
    else if (isDigit(first)) i = this.digits(i)
    else return this.at(i, "a digit")
    if (text.charCodeAt(i) === 46) { // .
      if (!isDigit(text.charCodeAt(++i))) return this.at(i, "a digit after the decimal point")
      i = this.digits(i)
    }
    const e = text.charCodeAt(i)
    if (e === 101 || e === 69) { // e E
      const sign = text.charCodeAt(++i)
      if (sign === 43 || sign === MINUS) i++
      if (!isDigit(text.charCodeAt(i))) return this.at(i, "a digit in the exponent")
      i = this.digits(i)
    }
    this.pos = i
    return true
  }

  /**
   * The index after the run of digits starting at `i`.
   *
   * @since 0.1.0
   */
  digits(i: number): number {
    const text = this.text
    while (isDigit(text.charCodeAt(i))) i++
    return i
  }

  /**
   * Fails at `i`, expecting `expected`.
   *
   * @since 0.1.0
   */
  at(i: number, expected: string): false {
    this.pos = i
    return this.unexpected(expected)
  }

  /**
   * Reads `true`, `false` or `null`.
   *
   * @since 0.1.0
   */
  literal(word: string): boolean {
    if (!this.text.startsWith(word, this.pos)) return this.unexpected(`"${word}"`)
    this.pos += word.length
    return true
  }

  /**
   * Reads an object member's key and its colon, leaving `pos` before the value.
   *
   * @since 0.1.0
   */
  key(): boolean {
    this.space()
    if (this.text.charCodeAt(this.pos) !== QUOTE) return this.unexpected("a string key")
    return this.string() && this.expect(COLON, "\":\" after a key")
  }

  /**
   * Reads one value of any depth; `pos` is at its first character (no whitespace before it).
   *
   * @since 0.1.0
   */
  value(): boolean {
    const text = this.text
    // Open containers, innermost last: true for an object, false for an array. Made for the first one only.
    let open: Array<boolean> | undefined
    for (;;) {
      // A value starts here.
      const c = text.charCodeAt(this.pos)
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        const isObject = c === OPEN_BRACE
        this.pos++
        this.space()
        if (text.charCodeAt(this.pos) === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
          this.pos++
        } else {
          if (open === undefined) open = []
          open.push(isObject)
          if (isObject && !this.key()) return false
          this.space()
          continue
        }
      } else if (c === QUOTE) {
        if (!this.string()) return false
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        if (!this.number()) return false
      } else if (c === 116) { // t
        if (!this.literal("true")) return false
      } else if (c === 102) { // f
        if (!this.literal("false")) return false
      } else if (c === 110) { // n
        if (!this.literal("null")) return false
      } else {
        return this.unexpected("a value")
      }
      // The value ended: close containers until one goes on with a comma.
      for (;;) {
        if (open === undefined || open.length === 0) return true
        const isObject = open[open.length - 1]
        this.space()
        const next = text.charCodeAt(this.pos)
        if (next === COMMA) {
          this.pos++
          if (isObject && !this.key()) return false
          this.space()
          break
        }
        if (next !== (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
          return this.unexpected(isObject ? "\",\" or \"}\" in an object" : "\",\" or \"]\" in an array")
        }
        this.pos++
        open.pop()
      }
    }
  }
}

/**
 * The value of the valid string token from `start` to `end` in `text` (`escaped`: the scanner's flag after reading
 * it).
 *
 * @example
 * ```ts
 * import { JsonScan } from "@erp-client/kernel"
 *
 * const text = `"Kov\\u00e1cs"`
 * const scanner = new JsonScan.Scanner(text)
 * scanner.string()
 * console.log(JsonScan.stringValue(text, 0, scanner.pos, scanner.escaped)) // => Kovács
 * ```
 *
 * @since 0.1.0
 * @category Scanning
 */
export const stringValue = (text: string, start: number, end: number, escaped: boolean): string =>
  escaped ? JSON.parse(text.slice(start, end)) as string : text.slice(start + 1, end - 1)
