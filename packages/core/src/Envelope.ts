/**
 * The response envelope shared by every endpoint, and the one place where a body becomes data or a typed error. The
 * rules (what `result.code` and `result.message` mean, how paths read) are `@erp-client/kernel/Envelope`'s; this module
 * decodes with the edition's `Schema`.
 *
 * @since 0.1.0
 */
import * as Rules from "@erp-client/kernel/Envelope"
import * as Schema from "effect/Schema"
import { ApiError, DecodeError, NotFound, Unauthorized } from "./ErpError.js"
import * as Edition from "./internal/edition.js"

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
 * @example
 * ```ts
 * import { Envelope, Partner } from "@erp-client/core"
 * import { Schema } from "effect"
 *
 * // The whole body of partner/get, with its data checked as a partner record
 * const body = Schema.decodeUnknownSync(Envelope.Envelope(Partner.Partner))({
 *   result: { code: 1, message: null },
 *   data: { id: 7, company_name: "Kovács Kft.", tax_number: "12345678-2-42" }
 * })
 * console.log(body.data.company_name) // => Kovács Kft.
 * ```
 *
 * @since 0.1.0
 * @category Schemas
 */
export const Envelope = <S extends Edition.AnySchema>(data: S) =>
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
export const CODE_OK: number = Rules.CODE_OK

/**
 * Error code of `result.code`.
 *
 * @since 0.1.0
 * @category Constants
 */
export const CODE_ERROR: number = Rules.CODE_ERROR

/**
 * Turns a decoded envelope into its data or the error it reports: `Unauthorized`, `Not found`, any other message
 * or any code other than 0 and 1 become `Unauthorized`, `NotFound` and `ApiError`.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // partner/get for an id that does not exist: the envelope's report becomes a NotFound
 * const envelope = { result: { code: 0, message: "Not found" }, data: null }
 * const result = Envelope.toData("partner/get", envelope, "id=9")
 * if (Either.isLeft(result)) console.log(result.left.message) // => partner/get: not found (id=9)
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const toData = (
  endpoint: string,
  envelope: RawEnvelope,
  selector?: string
): Edition.Result<unknown, Unauthorized | NotFound | ApiError> => {
  const { code, message } = envelope.result
  switch (Rules.verdict(code, message)) {
    case "Data":
      return Edition.Result.succeed(envelope.data)
    case "Unauthorized":
      return Edition.Result.fail(new Unauthorized({ endpoint }))
    case "NotFound":
      return Edition.Result.fail(new NotFound(selector === undefined ? { endpoint } : { endpoint, selector }))
    case "ApiError":
      return Edition.Result.fail(new ApiError({ endpoint, code, serverMessage: message }))
  }
}

/**
 * Formats the path of a schema issue the way a reader finds it in the body: `data[3].tax_number`.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/core"
 *
 * // Where the tax number of the fourth record of a partner/list body is
 * console.log(Envelope.formatPath("data", [3, "tax_number"])) // => data[3].tax_number
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const formatPath: (prefix: string, path: ReadonlyArray<PropertyKey>) => string = Rules.formatPath

/**
 * Builds a `DecodeError` from a schema error: the first issue's path (under `prefix`) and message.
 *
 * @example
 * ```ts
 * import { Decoder, Envelope, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // A partner/get record that strays from the contract, named by its path in the body
 * const record = { id: 7, company_name: "Kovács Kft.", tax_number: "HU12345678" }
 * const checked = Decoder.make(Partner.StrictPartner)(record)
 * if (Either.isLeft(checked)) {
 *   const error = Envelope.decodeErrorFrom("partner/get", "data", checked.left)
 *   console.log(error.path) // => data.tax_number
 * }
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeErrorFrom = (
  endpoint: string,
  prefix: string,
  error: Edition.SchemaError,
  extra?: { readonly offset?: number; readonly recordId?: unknown }
): DecodeError => {
  const first = Edition.firstIssue(error)
  return new DecodeError({
    endpoint,
    path: formatPath(prefix, first.path),
    reason: first.message,
    ...extra
  })
}

const decodeRawEnvelope = Edition.decodeUnknownResult(RawEnvelope)

/**
 * Runs a decoding step and turns anything it throws into a `DecodeError`: a hostile body nested a hundred thousand
 * levels deep can overflow the stack while its error is written, and that must end as a typed error like any other
 * bad body, not as an exception.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // A step that overflows the stack (as writing the error of a value nested 100,000 arrays deep can):
 * // a DecodeError all the same, not an exception
 * const overflow = (depth: number): never => overflow(depth + 1)
 * const result = Envelope.catchThrows("partner/get", "data", () => overflow(0))
 * if (Either.isLeft(result)) console.log(result.left.message)
 * // => partner/get: cannot decode data: the value cannot be checked (Maximum call stack size exceeded)
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const catchThrows = <A>(
  endpoint: string,
  path: string,
  step: () => Edition.Result<A, DecodeError>
): Edition.Result<A, DecodeError> => {
  try {
    return step()
  } catch (cause) {
    return Edition.Result.fail(new DecodeError({ endpoint, path, reason: Rules.uncheckable(cause) }))
  }
}

/**
 * Parses a response body as JSON and checks it is the envelope. A body that is not JSON or not the envelope is a
 * `DecodeError`; the envelope's own error report is not judged here (see `toData`).
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // The first step of every response: JSON, in the envelope's shape; data is left as it came
 * const body = JSON.stringify({ result: { code: 1, message: null }, data: { id: 7, company_name: "Kovács Kft." } })
 * const envelope = Envelope.parseBody("partner/get", body)
 * console.log(Either.isRight(envelope) && envelope.right.result.code) // => 1
 *
 * // A proxy's error page is a DecodeError, not an exception
 * const page = Envelope.parseBody("partner/get", "<html>502 Bad Gateway</html>")
 * console.log(Either.isLeft(page) && page.left._tag) // => DecodeError
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const parseBody = (endpoint: string, body: string): Edition.Result<RawEnvelope, DecodeError> => {
  const json = Rules.parseJson(body)
  if (!json.ok) return Edition.Result.fail(new DecodeError({ endpoint, path: "", reason: json.reason }))
  return catchThrows(
    endpoint,
    "",
    () => Edition.Result.mapError(decodeRawEnvelope(json.value), (error) => decodeErrorFrom(endpoint, "", error))
  )
}

/**
 * The data of a parsed envelope, decoded: the error the envelope reports, or `data` checked against the decoder.
 *
 * @example
 * ```ts
 * import { Decoder, Envelope, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * // The second step: the envelope's report, then data as a partner record
 * const body = JSON.stringify({ result: { code: 1, message: null }, data: { id: 7, company_name: "Kovács Kft." } })
 * const partner = Either.flatMap(
 *   Envelope.parseBody("partner/get", body),
 *   (envelope) => Envelope.decodeEnvelope("partner/get", envelope, Decoder.make(Partner.Partner), "id=7")
 * )
 * console.log(Either.isRight(partner) && partner.right.company_name) // => Kovács Kft.
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeEnvelope = <A>(
  endpoint: string,
  envelope: RawEnvelope,
  decodeData: (u: unknown) => Edition.Result<A, Edition.SchemaError>,
  selector?: string
): Edition.Result<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Edition.Result.flatMap(
    toData(endpoint, envelope, selector),
    (data) =>
      catchThrows(
        endpoint,
        "data",
        () => Edition.Result.mapError(decodeData(data), (error) => decodeErrorFrom(endpoint, "data", error))
      )
  )

/**
 * A body decoded all the way: JSON, envelope, error report, then `data` against the decoder.
 *
 * @example
 * ```ts
 * import { Decoder, Envelope, Partner } from "@erp-client/core"
 * import { Either } from "effect"
 *
 * const decodePartner = Decoder.make(Partner.Partner)
 *
 * // A partner/get body, all the way to the partner
 * const found = JSON.stringify({ result: { code: 1, message: null }, data: { id: 7, company_name: "Kovács Kft." } })
 * const partner = Envelope.decodeBody("partner/get", found, decodePartner, "id=7")
 * console.log(Either.isRight(partner) && partner.right.company_name) // => Kovács Kft.
 *
 * // The answer to a refused API key
 * const refused = JSON.stringify({ result: { code: 0, message: "Unauthorized" }, data: null })
 * const error = Envelope.decodeBody("partner/get", refused, decodePartner, "id=7")
 * console.log(Either.isLeft(error) && error.left._tag) // => Unauthorized
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeBody = <A>(
  endpoint: string,
  body: string,
  decodeData: (u: unknown) => Edition.Result<A, Edition.SchemaError>,
  selector?: string
): Edition.Result<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Edition.Result.flatMap(
    parseBody(endpoint, body),
    (envelope) => decodeEnvelope(endpoint, envelope, decodeData, selector)
  )
