/**
 * The JSON scanner under `JsonText`, for a program that reads records from their text itself (the command line's
 * `erp api infer` drafts a schema from number tokens as the server wrote them): a cursor that finds where values
 * start and end, as strict as `JSON.parse`, without building them, never throwing and never recursing.
 *
 * @since 0.1.0
 */
import * as Scan from "./internal/jsonScan.js"

/**
 * Why and where a text is not JSON: the scanner's `failure` after a read returned `false`.
 *
 * @since 0.1.0
 * @category Models
 */
export type Failure = Scan.Failure

/**
 * A cursor over one text. Each method reads one piece at `pos` and moves past it, or records `failure` and returns
 * `false`; `value()` reads one value of any depth.
 *
 * @example
 * ```ts
 * import { JsonScan } from "@erp-client/kernel"
 *
 * const scanner = new JsonScan.Scanner(`{"id": 12345678901234567890}`)
 * console.log(scanner.value(), scanner.pos) // => true 29
 * ```
 *
 * @since 0.1.0
 * @category Scanning
 */
export const Scanner = Scan.Scanner

/**
 * A scanner's instance.
 *
 * @since 0.1.0
 * @category Scanning
 */
export type Scanner = Scan.Scanner

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
export const stringValue: (text: string, start: number, end: number, escaped: boolean) => string = Scan.stringValue
