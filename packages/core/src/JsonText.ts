/**
 * JSON text exactly as it was written: the records of a response body as the server sent them, numbers included.
 *
 * `JSON.parse` turns a number into a float, so text written back from the parsed value is not what the server sent:
 * `12345678901234567890` comes back as `12345678901234567000`, `9007199254740993` as `9007199254740992`, `1.10` as
 * `1.1`, `1e2` as `100`, `-0.0` as `0`; and an object's integer-like keys (`"10"`, `"2"`) move ahead of the others.
 * The functions here read the text itself (`@erp-client/kernel/JsonText`, which both editions share) and hand out pieces of it,
 * compacted (whitespace outside strings removed, so a record fits one NDJSON line) but otherwise as written: number
 * tokens, key order, repeated keys and string escapes. The values they stand for are those `JSON.parse` gives.
 *
 * Nothing here throws: text that is not JSON is a `JsonTextError` naming the character where it stops being JSON.
 * Any depth of nesting is read without recursion; every call is one pass over its text.
 *
 * @since 0.1.0
 */
import * as Kernel from "@erp-client/kernel/JsonText"
import * as Data from "effect/Data"
import * as Edition from "./internal/edition.js"

/**
 * A text that is not JSON, or not of the shape asked for: where (a character index into the text) and why.
 *
 * **Fields**
 *
 * - `position` (number): the index of the character where reading stopped.
 * - `reason` (string): what was expected there.
 *
 * @since 0.1.0
 * @category Errors
 */
export class JsonTextError extends Data.TaggedError("JsonTextError")<{
  readonly position: number
  readonly reason: string
}> {
  override get message(): string {
    return `${this.reason} (character ${this.position})`
  }
}

/**
 * The `data` of a response body as the server wrote it.
 *
 * @since 0.1.0
 * @category Models
 */
export type DataText = Kernel.DataText

/**
 * One member of an object, read from its text.
 *
 * @since 0.1.0
 * @category Models
 */
export type Member = Kernel.Member

const result = <A>(read: Kernel.Read<A>): Edition.Result<A, JsonTextError> =>
  read.ok ? Edition.Result.succeed(read.value) : Edition.Result.fail(new JsonTextError(read.failure))

/**
 * The text of one JSON value, compact (whitespace outside strings removed), otherwise as written; or why it is not
 * JSON. Whitespace around the value is allowed; anything else after it is not.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // Whitespace goes; the numbers stay as written (JSON.parse reads 1500.5 and 12345678901234567000)
 * const text = JsonText.compact(`{ "id": 7, "credit_limit": 1500.50, "bank_account": 12345678901234567890 }`)
 * console.log(Either.getOrThrow(text)) // => {"id":7,"credit_limit":1500.50,"bank_account":12345678901234567890}
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const compact = (text: string): Edition.Result<string, JsonTextError> => result(Kernel.compact(text))

/**
 * The members of one object, from its text, in the order written (a repeated key appears each time; `JSON.parse`
 * keeps the last): for CSV and tables that must show numbers as the server wrote them.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // A partner record as table cells, its numbers as the server wrote them
 * const cells = JsonText.members(`{"id":7,"company_name":"Kovács Kft.","credit_limit":1500.50,"fax":null}`)
 * for (const { cell, key } of Either.getOrThrow(cells)) console.log(key, cell)
 * // => id 7
 * // => company_name Kovács Kft.
 * // => credit_limit 1500.50
 * // => fax null
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const members = (text: string): Edition.Result<ReadonlyArray<Member>, JsonTextError> =>
  result(Kernel.members(text))

/**
 * Whether `JSON.stringify(JSON.parse(text))` writes every number token, key order and string of `text` as written,
 * apart from whitespace; `false` when it may not (a number a float changes, an integer-like key, a `\/` or `\uXXXX`
 * escape, a lone surrogate). A few regular-expression passes; it may say `false` for a text that would come back the
 * same (it looks inside strings too), never `true` for one that would not, except for a repeated key (`JSON.parse`
 * keeps the last).
 *
 * Not a shortcut for exact output: this check costs about what reading each record's text with `dataText` does, so
 * the client's exact mode always reads the text; this is for a caller that holds parsed values and wants to know
 * whether writing them back is faithful.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/core"
 *
 * // Would JSON.stringify(JSON.parse(text)) write this record as the server did?
 * console.log(JsonText.isPlain(`{"id":7,"company_name":"Kovács Kft."}`)) // => true
 * console.log(JsonText.isPlain(`{"id":7,"credit_limit":1500.50}`)) // => false
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const isPlain: (text: string) => boolean = Kernel.isPlain

/**
 * The `data` of a response body (`{ "result": …, "data": … }`) as the server wrote it: its text, and when it is an
 * array, the text of each element (one record each), all compact but otherwise as sent. A repeated `data` key counts
 * once, the last time, as with `JSON.parse`. One pass over the body.
 *
 * @example
 * ```ts
 * import { JsonText } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // The records of a partner/list body as the server wrote them: one NDJSON line each
 * const body = `{"result":{"code":1,"message":null},"data":[{"id":7, "credit_limit":1500.50}, {"id":8}]}`
 * const { elements } = Either.getOrThrow(JsonText.dataText(body))
 * console.log(elements) // => [ '{"id":7,"credit_limit":1500.50}', '{"id":8}' ]
 * ```
 *
 * @since 0.1.0
 * @category Reading
 */
export const dataText = (body: string): Edition.Result<DataText, JsonTextError> => result(Kernel.dataText(body))
