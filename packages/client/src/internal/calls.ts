/**
 * The calls of `ErpClient`: a request built for an endpoint, run by the executor (which hands back the envelope it
 * checked), the envelope judged (`Envelope`), the data decoded (`Decoder`, `Page`), each call in its span.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Decoder from "@erp-client/core/Decoder"
import * as Envelope from "@erp-client/core/Envelope"
import { InvalidRequest } from "@erp-client/core/ErpError"
import * as ListQuery from "@erp-client/core/ListQuery"
import * as Page from "@erp-client/core/Page"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { PageQuery, Params, Service } from "../ErpClient.js"
import type * as Executor from "./executor.js"

const ENDPOINT = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*$/

/**
 * Checks an endpoint path (`partner/list`): relative, made of `[A-Za-z0-9_-]` segments, so it can never leave the
 * base URL or smuggle a query.
 */
export const validateEndpoint = (endpoint: string): Either.Either<string, InvalidRequest> =>
  ENDPOINT.test(endpoint)
    ? Either.right(endpoint)
    : Either.left(
      new InvalidRequest({ endpoint, reason: "an endpoint is a relative path of [A-Za-z0-9_-] segments" })
    )

// The paging parameters, then the caller's others: those may not set what paging sets.
const listParams = (endpoint: string, query: PageQuery): Either.Either<Params, InvalidRequest> =>
  Either.flatMap(ListQuery.toParams(endpoint, query), (paging) => {
    const other = query.params ?? []
    const taken = other.find(([name]) =>
      name === "list_offset" || name === "list_count" || name.startsWith("list_condition[")
    )
    return taken === undefined
      ? Either.right([...paging, ...other])
      : Either.left(new InvalidRequest({ endpoint, reason: `${taken[0]} is set by paging, not as a parameter` }))
  })

/** `get`, `list` and `post` on the executor. */
export const make = (execute: Executor.Execute): Pick<
  Service,
  "get" | "list" | "post"
> => {
  const call = (
    method: "GET" | "POST",
    endpoint: string,
    params: Params,
    body: unknown
  ): Effect.Effect<Envelope.RawEnvelope, Executor.ExecuteError | InvalidRequest> =>
    Either.match(validateEndpoint(endpoint), {
      onLeft: Effect.fail,
      onRight: (path) => {
        let request = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path)
        if (params.length > 0) request = HttpClientRequest.setUrlParams(request, params)
        if (method === "POST" && body !== undefined) {
          request = HttpClientRequest.bodyText(request, JSON.stringify(body), "application/json")
        }
        return execute(request, { envelope: true }).pipe(
          // The executor checked the envelope of every 2xx answer it hands back.
          Effect.map((exchange) => exchange.envelope!),
          Effect.tap((envelope) => Effect.annotateCurrentSpan("erp.result.code", envelope.result.code))
        )
      }
    })

  // A stack trace per call costs more than the rest of the span; the attributes say where it came from.
  const span = (name: string, attributes: Record<string, unknown>) =>
    Effect.withSpan(name, { attributes, captureStackTrace: false })

  const get: Service["get"] = (endpoint, schema, options) => {
    const decode = Decoder.make(schema)
    return call("GET", endpoint, options?.params ?? [], undefined).pipe(
      Effect.flatMap((envelope) => Envelope.decodeEnvelope(endpoint, envelope, decode, options?.selector)),
      span("ErpClient.get", { "erp.endpoint": endpoint })
    )
  }

  const list: Service["list"] = (endpoint, schema, query) => {
    const decode = Decoder.make(schema)
    return Either.match(listParams(endpoint, query), {
      onLeft: Effect.fail,
      onRight: (params) =>
        call("GET", endpoint, params, undefined).pipe(
          Effect.flatMap((envelope) =>
            Either.flatMap(
              Envelope.toData(endpoint, envelope),
              (data) =>
                Page.decodePage(endpoint, decode, data, query.offset, query.count, query.invalidRecords ?? "fail")
            )
          ),
          Effect.tap((page) => Effect.annotateCurrentSpan("erp.records", page.received)),
          span("ErpClient.list", {
            "erp.endpoint": endpoint,
            "erp.list_offset": query.offset,
            "erp.list_count": query.count
          })
        )
    })
  }

  const post: Service["post"] = (endpoint, schema, options) => {
    const decode = Decoder.make(schema)
    return call("POST", endpoint, options?.params ?? [], options?.body).pipe(
      Effect.flatMap((envelope) => Envelope.decodeEnvelope(endpoint, envelope, decode)),
      span("ErpClient.post", { "erp.endpoint": endpoint })
    )
  }

  return { get, list, post }
}
