/**
 * The calls of `ErpClient`: a request built for an endpoint, run by the executor (which hands back the envelope it
 * checked, with the body it came in), the envelope judged (`Envelope`), the data decoded (`Decoder`, `Page`), each
 * call in its span (`Observe.observeCall`). In exact mode the data's text is also read from the body as written
 * (`JsonText`), only then: the default path pays nothing for it.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Decoder from "@erp-client/core/Decoder"
import * as Envelope from "@erp-client/core/Envelope"
import type { InvalidRequest } from "@erp-client/core/ErpError"
import { DecodeError } from "@erp-client/core/ErpError"
import * as JsonText from "@erp-client/core/JsonText"
import { checked } from "@erp-client/core/ListQuery"
import * as Page from "@erp-client/core/Page"
import * as Texts from "@erp-client/kernel/JsonText"
import * as Query from "@erp-client/kernel/ListQuery"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type { CallError, Exact, GetOptions, PageQuery, Params, PostOptions, Service } from "../ErpClient.js"
import type * as Executor from "./executor.js"
import * as Observe from "./observe.js"

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the
 * base URL or smuggle a query.
 */
export const validateEndpoint = (endpoint: string): Either.Either<string, InvalidRequest> =>
  checked(endpoint, Query.checkEndpoint(endpoint))

// The paging parameters, then the caller's others: those may not set what paging sets.
const listParams = (endpoint: string, query: PageQuery): Either.Either<Params, InvalidRequest> =>
  checked(endpoint, Query.listParams(query, query.params))

// The data's text as the server wrote it. The body was parsed already, so this fails only on a body `JSON.parse`
// reads and the scanner does not, which is a fault of the scanner's worth naming rather than hiding.
const dataText = (endpoint: string, body: string): Either.Either<JsonText.DataText, DecodeError> =>
  Either.mapLeft(
    JsonText.dataText(body),
    (error) => new DecodeError({ endpoint, path: "", reason: `the body cannot be read as written: ${error.message}` })
  )

const withText = <A>(endpoint: string, body: string, value: A): Either.Either<Exact<A>, DecodeError> =>
  Either.map(dataText(endpoint, body), (text) => ({ value, json: text.data }))

// The body to send (`@erp-client/kernel/JsonText`): a value as JSON.stringify writes it, or JSON text as it is.
const bodyOf = (
  endpoint: string,
  options: PostOptions | undefined
): Either.Either<string | undefined, InvalidRequest> => checked(endpoint, Texts.requestBody(options))

/** A list answer's data as a page, decoded record by record (with the records' texts in exact mode). */
const pageOf = <A>(
  endpoint: string,
  decode: Page.DecodePageOptions<A>["decodeRecord"],
  query: PageQuery,
  data: unknown,
  text: string
) => {
  const mode = query.invalidRecords ?? "fail"
  if (query.exact !== true || !Array.isArray(data)) {
    return Page.decodePage({
      endpoint,
      decodeRecord: decode,
      data,
      offset: query.offset,
      count: query.count,
      mode
    })
  }
  return Either.flatMap(
    dataText(endpoint, text),
    (exact) =>
      Page.decodePage({
        endpoint,
        decodeRecord: decode,
        data,
        offset: query.offset,
        count: query.count,
        mode,
        json: exact.elements
      })
  )
}

/** One request of `method` to `endpoint`, run by the executor: its envelope (checked) and the body it came in. */
const sendWith = (execute: Executor.Execute) =>
(
  method: "GET" | "POST",
  endpoint: string,
  params: Params,
  body: string | undefined,
  maxWaitMillis?: number
): Effect.Effect<readonly [Envelope.RawEnvelope, string], Executor.ExecuteError | InvalidRequest> =>
  Either.match(validateEndpoint(endpoint), {
    onLeft: Effect.fail,
    onRight: (path) => {
      let request = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path)
      if (params.length > 0) request = HttpClientRequest.setUrlParams(request, params)
      if (method === "POST" && body !== undefined) {
        request = HttpClientRequest.bodyText(request, body, "application/json")
      }
      return execute(request, { envelope: true, maxWaitMillis }).pipe(
        // The executor checked the envelope of every 2xx answer it hands back; the body comes with it.
        Effect.map((exchange) => [exchange.envelope!, exchange.answer.text] as const),
        Effect.tap(([envelope]) => Effect.annotateCurrentSpan("erp.result.code", envelope.result.code))
      )
    }
  })

/** `get`, `list` and `post` on the executor. */
export const make = (execute: Executor.Execute): Pick<Service, "get" | "list" | "post"> => {
  const call = sendWith(execute)

  const get = (<A, I>(
    endpoint: string,
    schema: Schema.Schema<A, I>,
    options?: GetOptions & { readonly exact?: boolean | undefined }
  ) => {
    const decode = Decoder.make(schema)
    const maxWait = options?.maxWait === undefined ? undefined : Duration.toMillis(options.maxWait)
    return call("GET", endpoint, options?.params ?? [], undefined, maxWait).pipe(
      Effect.flatMap(([envelope, text]): Either.Either<A | Exact<A>, CallError> => {
        const decoded = Envelope.decodeEnvelope(endpoint, envelope, decode, options?.selector)
        return options?.exact === true ? Either.flatMap(decoded, (value) => withText(endpoint, text, value)) : decoded
      }),
      (effect) => Observe.observeCall(effect, "ErpClient.get", endpoint, { "erp.endpoint": endpoint })
    )
  }) as Service["get"]

  const list: Service["list"] = (endpoint, schema, query) => {
    const decode = Decoder.make(schema)
    return Either.match(listParams(endpoint, query), {
      onLeft: Effect.fail,
      onRight: (params) =>
        call("GET", endpoint, params, undefined).pipe(
          Effect.flatMap(([envelope, text]) =>
            Either.flatMap(Envelope.toData(endpoint, envelope), (data) => pageOf(endpoint, decode, query, data, text))
          ),
          Effect.tap((page) => Effect.annotateCurrentSpan("erp.records", page.received)),
          (effect) =>
            Observe.observeCall(effect, "ErpClient.list", endpoint, {
              "erp.endpoint": endpoint,
              "erp.list_offset": query.offset,
              "erp.list_count": query.count
            })
        )
    })
  }

  const post = (<A, I>(
    endpoint: string,
    schema: Schema.Schema<A, I>,
    options?: PostOptions & { readonly exact?: boolean | undefined }
  ) => {
    const decode = Decoder.make(schema)
    return Either.match(bodyOf(endpoint, options), {
      onLeft: Effect.fail,
      onRight: (body) =>
        call("POST", endpoint, options?.params ?? [], body).pipe(
          Effect.flatMap(([envelope, text]): Either.Either<A | Exact<A>, CallError> => {
            const decoded = Envelope.decodeEnvelope(endpoint, envelope, decode)
            return options?.exact === true
              ? Either.flatMap(decoded, (value) => withText(endpoint, text, value))
              : decoded
          }),
          (effect) => Observe.observeCall(effect, "ErpClient.post", endpoint, { "erp.endpoint": endpoint })
        )
    })
  }) as Service["post"]

  return { get, list, post }
}
