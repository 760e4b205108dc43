/**
 * The response envelope shared by every endpoint, and the one place where a body becomes data or a typed error. The
 * rules (what `result.code` and `result.message` mean, how paths read) are `@erp-client/kernel/Envelope`'s; this module
 * decodes with Effect 4's `Schema` and gives `Result`s.
 *
 * @since 0.1.0
 */
import * as Rules from "@erp-client/kernel/Envelope"
import * as Res from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
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
 * @example
 * ```ts
 * import { Envelope, Partner } from "@erp-client/effect4-core"
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
export const Envelope = <S extends Schema.Top>(data: S) =>
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
 * import { Envelope } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * // partner/get for an id that does not exist: the envelope's report becomes a NotFound
 * const envelope = { result: { code: 0, message: "Not found" }, data: null }
 * const result = Envelope.toData("partner/get", envelope, "id=9")
 * if (Result.isFailure(result)) console.log(result.failure.message) // => partner/get: not found (id=9)
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const toData = (
  endpoint: string,
  envelope: RawEnvelope,
  selector?: string
): Res.Result<unknown, Unauthorized | NotFound | ApiError> => {
  const { code, message } = envelope.result
  switch (Rules.verdict(code, message)) {
    case "Data":
      return Res.succeed(envelope.data)
    case "Unauthorized":
      return Res.fail(new Unauthorized({ endpoint }))
    case "NotFound":
      return Res.fail(new NotFound(selector === undefined ? { endpoint } : { endpoint, selector }))
    case "ApiError":
      return Res.fail(new ApiError({ endpoint, code, serverMessage: message }))
  }
}

/**
 * Formats the path of a schema issue the way a reader finds it in the body: `data[3].tax_number`.
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/effect4-core"
 *
 * // Where the tax number of the fourth record of a partner/list body is
 * console.log(Envelope.formatPath("data", [3, "tax_number"])) // => data[3].tax_number
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const formatPath: (prefix: string, path: ReadonlyArray<PropertyKey>) => string = Rules.formatPath

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Builds a `DecodeError` from a schema error: the first issue's path (under `prefix`) and message.
 *
 * @example
 * ```ts
 * import { Envelope, Partner } from "@erp-client/effect4-core"
 * import { Result, Schema } from "effect"
 *
 * // A partner/get record that strays from the contract, named by its path in the body
 * const record = { id: 7, company_name: "Kovács Kft.", tax_number: "HU12345678" }
 * const checked = Schema.decodeUnknownResult(Partner.StrictPartner)(record)
 * if (Result.isFailure(checked)) {
 *   const error = Envelope.decodeErrorFrom("partner/get", "data", checked.failure)
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
  error: Schema.SchemaError,
  extra?: { readonly offset?: number; readonly recordId?: unknown }
): DecodeError => {
  const first = formatIssues(error.issue).issues[0]
  return new DecodeError({
    endpoint,
    path: formatPath(prefix, (first?.path ?? []) as ReadonlyArray<PropertyKey>),
    reason: first?.message ?? error.message,
    ...extra
  })
}

const decodeRawEnvelope = Schema.decodeUnknownResult(RawEnvelope)

/**
 * Runs a decoding step and turns anything it throws into a `DecodeError`: a hostile body nested a hundred thousand
 * levels deep overflows the stack while its error is written, and that must end as a typed error like any other bad
 * body, not as an exception.
 *
 * @example
 * ```ts
 * import { Envelope, Partner } from "@erp-client/effect4-core"
 * import { Result, Schema } from "effect"
 *
 * const decodePartner = Schema.decodeUnknownResult(Partner.Partner)
 * const result = Envelope.catchThrows("partner/get", "data", () =>
 *   Result.mapError(
 *     decodePartner({ id: 7, company_name: "Kovács Kft." }),
 *     (error) => Envelope.decodeErrorFrom("partner/get", "data", error)
 *   ))
 * console.log(Result.isSuccess(result)) // => true
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const catchThrows = <A>(
  endpoint: string,
  path: string,
  step: () => Res.Result<A, DecodeError>
): Res.Result<A, DecodeError> => {
  try {
    return step()
  } catch (cause) {
    return Res.fail(new DecodeError({ endpoint, path, reason: Rules.uncheckable(cause) }))
  }
}

/**
 * Parses a response body as JSON and checks it is the envelope. A body that is not JSON or not the envelope is a
 * `DecodeError`; the envelope's own error report is not judged here (see `toData`).
 *
 * @example
 * ```ts
 * import { Envelope } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const body = JSON.stringify({ result: { code: 1, message: null }, data: { id: 7, company_name: "Kovács Kft." } })
 * const envelope = Envelope.parseBody("partner/get", body)
 * console.log(Result.isSuccess(envelope) && envelope.success.result.code) // => 1
 *
 * // A proxy's error page is a DecodeError, not an exception
 * const page = Envelope.parseBody("partner/get", "<html>502 Bad Gateway</html>")
 * console.log(Result.isFailure(page) && page.failure._tag) // => DecodeError
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const parseBody = (endpoint: string, body: string): Res.Result<RawEnvelope, DecodeError> => {
  const json = Rules.parseJson(body)
  if (!json.ok) return Res.fail(new DecodeError({ endpoint, path: "", reason: json.reason }))
  return catchThrows(
    endpoint,
    "",
    () => Res.mapError(decodeRawEnvelope(json.value), (error) => decodeErrorFrom(endpoint, "", error))
  )
}

/**
 * The data of a parsed envelope, decoded: the error the envelope reports, or `data` checked against the decoder.
 *
 * @example
 * ```ts
 * import { Decoder, Envelope, Partner } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const body = JSON.stringify({ result: { code: 1, message: null }, data: { id: 7, company_name: "Kovács Kft." } })
 * const partner = Result.flatMap(
 *   Envelope.parseBody("partner/get", body),
 *   (envelope) => Envelope.decodeEnvelope("partner/get", envelope, Decoder.make(Partner.Partner), "id=7")
 * )
 * console.log(Result.isSuccess(partner) && partner.success.company_name) // => Kovács Kft.
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeEnvelope = <A>(
  endpoint: string,
  envelope: RawEnvelope,
  decodeData: (u: unknown) => Res.Result<A, Schema.SchemaError>,
  selector?: string
): Res.Result<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Res.flatMap(
    toData(endpoint, envelope, selector),
    (data) =>
      catchThrows(
        endpoint,
        "data",
        () => Res.mapError(decodeData(data), (error) => decodeErrorFrom(endpoint, "data", error))
      )
  )

/**
 * A body decoded all the way: JSON, envelope, error report, then `data` against the decoder.
 *
 * @example
 * ```ts
 * import { Decoder, Envelope, Partner } from "@erp-client/effect4-core"
 * import { Result } from "effect"
 *
 * const decodePartner = Decoder.make(Partner.Partner)
 *
 * // The answer to a refused API key
 * const refused = JSON.stringify({ result: { code: 0, message: "Unauthorized" }, data: null })
 * const error = Envelope.decodeBody("partner/get", refused, decodePartner, "id=7")
 * console.log(Result.isFailure(error) && error.failure._tag) // => Unauthorized
 * ```
 *
 * @since 0.1.0
 * @category Decoding
 */
export const decodeBody = <A>(
  endpoint: string,
  body: string,
  decodeData: (u: unknown) => Res.Result<A, Schema.SchemaError>,
  selector?: string
): Res.Result<A, DecodeError | Unauthorized | NotFound | ApiError> =>
  Res.flatMap(parseBody(endpoint, body), (envelope) => decodeEnvelope(endpoint, envelope, decodeData, selector))
