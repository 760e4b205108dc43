/**
 * A schema that checks data against another and keeps it exactly as sent: for output that reproduces the server's
 * JSON (same object, same key order) while the client still judges it, in the one decoding it does.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * Decodes to the input itself once it decodes with `schema`; a mismatch fails with `schema`'s own issue (and path).
 * Whatever `schema` does to a valid value (a lenient schema may fill in or rewrite fields) is not written out.
 */
export const asSent = <A, I>(schema: Schema.Schema<A, I>): Schema.Schema<unknown> =>
  Schema.transformOrFail(Schema.Unknown, Schema.Unknown, {
    strict: true,
    decode: (input, options) => ParseResult.map(ParseResult.decodeUnknownEither(schema)(input, options), () => input),
    encode: ParseResult.succeed
  })
