/**
 * The response envelope shared by every endpoint, and the one place where a body becomes data or a typed error.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ApiError, DecodeError, NotFound, Unauthorized } from "./ErpError.js"

/**
 * `result` of the envelope: `code` 1 is success, 0 is an error described by `message`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const Result = Schema.Struct({
  code: Schema.Number,
  message: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category Models
 */
export type Result = typeof Result.Type

/**
 * The envelope around `data`: `{ result: { code, message }, data }`.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const Envelope = <A, I, R>(data: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    result: Result,
    data
  })

/**
 * The envelope with its data left undecoded: what every response is checked against first.
 *
 * @since 0.1.0
 * @category Schemas
 */
export const RawEnvelope = Envelope(Schema.Unknown)

/**
 * @since 0.1.0
 * @category Models
 */
export type RawEnvelope = typeof RawEnvelope.Type

/**
 * Success code of `result.code`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CODE_OK = 1

/**
 * Error code of `result.code`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CODE_ERROR = 0

/**
 * Turns a decoded envelope into its data or the error it reports: `Unauthorized`, `Not found`, any other message
 * or any code other than 0 and 1 become `Unauthorized`, `NotFound` and `ApiError`.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const toData = (
  endpoint: string,
  envelope: RawEnvelope,
  selector?: string
): Either.Either<unknown, Unauthorized | NotFound | ApiError> => {
  const { code, message } = envelope.result
  if (code === CODE_OK) return Either.right(envelope.data)
  if (code === CODE_ERROR) {
    // The contract names these two messages; compare leniently on case and surrounding space.
    const normalized = message?.trim().toLowerCase()
    if (normalized === "unauthorized") return Either.left(new Unauthorized({ endpoint }))
    if (normalized === "not found") {
      return Either.left(new NotFound(selector === undefined ? { endpoint } : { endpoint, selector }))
    }
  }
  return Either.left(new ApiError({ endpoint, code, serverMessage: message }))
}

/**
 * Formats the path of a parse issue the way a reader finds it in the body: `data[3].tax_number`.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const formatPath = (prefix: string, path: ReadonlyArray<PropertyKey>): string => {
  let out = prefix
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

/**
 * Builds a `DecodeError` from a parse error: the first issue's path (under `prefix`) and message.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeErrorFrom = (
  endpoint: string,
  prefix: string,
  error: ParseResult.ParseError,
  extra?: { readonly offset?: number; readonly recordId?: unknown }
): DecodeError => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  return new DecodeError({
    endpoint,
    path: formatPath(prefix, first?.path ?? []),
    reason: first?.message ?? error.message,
    ...extra
  })
}

const decodeRawEnvelope = Schema.decodeUnknownEither(RawEnvelope, { onExcessProperty: "ignore" })

/**
 * Runs a decoding step and turns anything it throws into a `DecodeError`. Schema's messages print the offending
 * value, and a hostile body nested a hundred thousand levels deep overflows the stack there: that must end as a
 * typed error like any other bad body, not as an exception.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const catchThrows = <A>(
  endpoint: string,
  path: string,
  step: () => Either.Either<A, DecodeError>
): Either.Either<A, DecodeError> => {
  try {
    return step()
  } catch (cause) {
    return Either.left(
      new DecodeError({
        endpoint,
        path,
        reason: `the value cannot be checked (${cause instanceof Error ? cause.message : String(cause)})`
      })
    )
  }
}

/**
 * Parses a response body as JSON and checks it is the envelope. A body that is not JSON or not the envelope is a
 * `DecodeError`; the envelope's own error report is not judged here (see `toData`).
 *
 * @since 0.1.0
 * @category Decoding
 */
export const parseBody = (endpoint: string, body: string): Either.Either<RawEnvelope, DecodeError> => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch (cause) {
    // JSON.parse is the one API here that throws; its message names the position, never the key.
    return Either.left(
      new DecodeError({
        endpoint,
        path: "",
        reason: `the body is not valid JSON (${cause instanceof Error ? cause.message : String(cause)})`
      })
    )
  }
  return catchThrows(
    endpoint,
    "",
    () => Either.mapLeft(decodeRawEnvelope(json), (error) => decodeErrorFrom(endpoint, "", error))
  )
}

/**
 * The data of a parsed envelope, decoded: the error the envelope reports, or `data` checked against the decoder.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeEnvelope = <A>(
  endpoint: string,
  envelope: RawEnvelope,
  decodeData: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  selector?: string
): Either.Either<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Either.flatMap(
    toData(endpoint, envelope, selector),
    (data) =>
      catchThrows(
        endpoint,
        "data",
        () => Either.mapLeft(decodeData(data), (error) => decodeErrorFrom(endpoint, "data", error))
      )
  )

/**
 * A body decoded all the way: JSON, envelope, error report, then `data` against `schema`.
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeBody = <A>(
  endpoint: string,
  body: string,
  decodeData: (u: unknown) => Either.Either<A, ParseResult.ParseError>,
  selector?: string
): Either.Either<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Either.flatMap(parseBody(endpoint, body), (envelope) => decodeEnvelope(endpoint, envelope, decodeData, selector))
