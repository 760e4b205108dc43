/**
 * The calls of `ErpClient`: a request built for an endpoint (its path and query checked by
 * `@erp-client/kernel/ListQuery`), run by the executor (which hands back the envelope it checked, with the body it came
 * in), the envelope judged (`Envelope`), the data decoded (`Decoder`, `Page`), each call in its span
 * (`Observe.observeCall`). In exact mode the data's text is also read from the body as written
 * (`JsonText`), only then: the default path pays nothing for it.
 */
import * as RecordDecoder from "@erp-client/core/Decoder"
import * as Envelope from "@erp-client/core/Envelope"
import { DecodeError, InvalidRequest } from "@erp-client/core/ErpError"
import * as JsonText from "@erp-client/core/JsonText"
import * as Page from "@erp-client/core/Page"
import * as Texts from "@erp-client/kernel/JsonText"
import * as Query from "@erp-client/kernel/ListQuery"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { CallError, Exact, GetOptions, PageQuery, Params, PostOptions, Service } from "../ErpClient.js"
import { type Decoder, HttpClientRequest, Result } from "./edition.js"
import type * as Executor from "./executor.js"
import * as Observe from "./observe.js"

/** A refusal of the kernel's checks (`@erp-client/kernel/ListQuery`) as the `InvalidRequest` of `endpoint`. */
const checked = <A>(endpoint: string, check: Query.Checked<A>): Result<A, InvalidRequest> =>
  check.ok ? Result.succeed(check.value) : Result.fail(new InvalidRequest({ endpoint, reason: check.reason }))

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the
 * base URL or smuggle a query.
 */
export const validateEndpoint = (endpoint: string): Result<string, InvalidRequest> =>
  checked(endpoint, Query.checkEndpoint(endpoint))

// The paging parameters, then the caller's others: those may not set what paging sets.
const listParams = (endpoint: string, query: PageQuery): Result<Params, InvalidRequest> =>
  checked(endpoint, Query.listParams(query, query.params))

// The data's text as the server wrote it. The body was parsed already, so this fails only on a body `JSON.parse`
// reads and the scanner does not, which is a fault of the scanner's worth naming rather than hiding.
const dataText = (endpoint: string, body: string): Result<JsonText.DataText, DecodeError> =>
  Result.mapError(
    JsonText.dataText(body),
    (error) => new DecodeError({ endpoint, path: "", reason: `the body cannot be read as written: ${error.message}` })
  )

const withText = <A>(endpoint: string, body: string, value: A): Result<Exact<A>, DecodeError> =>
  Result.map(dataText(endpoint, body), (text) => ({ value, json: text.data }))

// The body to send (`@erp-client/kernel/JsonText`): a value as JSON.stringify writes it, or JSON text as it is.
const bodyOf = (
  endpoint: string,
  options: PostOptions | undefined
): Result<string | undefined, InvalidRequest> => checked(endpoint, Texts.requestBody(options))

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
  return Result.flatMap(
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
  Result.match(validateEndpoint(endpoint), {
    onFailure: Effect.fail,
    onSuccess: (path) => {
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

  const get = (<A>(
    endpoint: string,
    schema: Decoder<A>,
    options?: GetOptions & { readonly exact?: boolean | undefined }
  ) => {
    const decode = RecordDecoder.make(schema)
    const maxWait = options?.maxWait === undefined ? undefined : Duration.toMillis(options.maxWait)
    return call("GET", endpoint, options?.params ?? [], undefined, maxWait).pipe(
      Effect.flatMap(([envelope, text]) => {
        const decoded = Envelope.decodeEnvelope(endpoint, envelope, decode, options?.selector)
        return Result.toEffect<A | Exact<A>, CallError>(
          options?.exact === true ? Result.flatMap(decoded, (value) => withText(endpoint, text, value)) : decoded
        )
      }),
      (effect) => Observe.observeCall(effect, "ErpClient.get", endpoint, { "erp.endpoint": endpoint })
    )
  }) as Service["get"]

  const list: Service["list"] = (endpoint, schema, query) => {
    const decode = RecordDecoder.make(schema)
    return Result.match(listParams(endpoint, query), {
      onFailure: Effect.fail,
      onSuccess: (params) =>
        call("GET", endpoint, params, undefined).pipe(
          Effect.flatMap(([envelope, text]) =>
            Result.toEffect(
              Result.flatMap(Envelope.toData(endpoint, envelope), (data) => pageOf(endpoint, decode, query, data, text))
            )
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

  const post = (<A>(
    endpoint: string,
    schema: Decoder<A>,
    options?: PostOptions & { readonly exact?: boolean | undefined }
  ) => {
    const decode = RecordDecoder.make(schema)
    return Result.match(bodyOf(endpoint, options), {
      onFailure: Effect.fail,
      onSuccess: (body) =>
        call("POST", endpoint, options?.params ?? [], body).pipe(
          Effect.flatMap(([envelope, text]) => {
            const decoded = Envelope.decodeEnvelope(endpoint, envelope, decode)
            return Result.toEffect<A | Exact<A>, CallError>(
              options?.exact === true ? Result.flatMap(decoded, (value) => withText(endpoint, text, value)) : decoded
            )
          }),
          (effect) => Observe.observeCall(effect, "ErpClient.post", endpoint, { "erp.endpoint": endpoint })
        )
    })
  }) as Service["post"]

  return { get, list, post }
}
