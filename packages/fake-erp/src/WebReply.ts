/**
 * The in-memory ERP served to an HTTP client without a socket, in fetch's terms: a request as `ErpRules.arrive` takes
 * it, whether the in-memory server takes it at all, and each `ErpRules.Reply` as what a client on a real connection
 * would see: a web `Response` (no body for the statuses that have none, `Content-Type` and `Content-Length` set), a body
 * that fails after its first bytes for a connection cut in the middle of one, or a connection that fails (its
 * description) or never answers. Each edition's in-memory `HttpClient` (the Effect 3 sandbox's
 * `Sandbox.makeHttpClient`, the Effect 4 test kit's) wraps these in its own `HttpClientResponse` and errors.
 *
 * @since 0.1.0
 */
import type * as ErpRules from "./ErpRules.js"

/**
 * What a client sees of a reply:
 *
 * - `Response`: a web `Response` (for `CutBody`, one whose body fails after its first bytes: reading it fails);
 * - `Failed`: the connection fails before any response (`description` says how): an HTTP client's transport error;
 * - `Hang`: nothing, until the client gives up or the server closes (then `closedUnanswered`).
 *
 * @since 0.1.0
 * @category Models
 */
export type Delivery =
  | { readonly _tag: "Response"; readonly response: Response }
  | { readonly _tag: "Failed"; readonly description: string }
  | { readonly _tag: "Hang" }

/**
 * Statuses whose response has no body (fetch's `Response` refuses one).
 *
 * @since 0.1.0
 * @category Constants
 */
export const nullBodyStatuses: ReadonlySet<number> = new Set([101, 103, 204, 205, 304])

/**
 * What a client is told when the server closes while its request hangs unanswered (`Hang`).
 *
 * @since 0.1.0
 * @category Constants
 */
export const closedUnanswered = "the sandbox closed with the request unanswered"

/**
 * A request as `ErpRules.arrive` takes it: the method, the URL's path and query as sent, and the `X-API-KEY` header
 * (`headers` with lower-case names, as HTTP clients keep them; `""` without one).
 *
 * @example
 * ```ts
 * import { WebReply } from "@erp-client/fake-erp"
 *
 * const url = new URL("https://sandbox.erp.invalid/partner/list?list_offset=0&list_count=25")
 * console.log(WebReply.incoming("GET", url, { "x-api-key": "sandbox-key" }))
 * // => { method: 'GET', url: '/partner/list?list_offset=0&list_count=25', apiKey: 'sandbox-key' }
 * ```
 *
 * @since 0.1.0
 * @category Serving
 */
export const incoming = (
  method: string,
  url: URL,
  headers: Readonly<Record<string, string | undefined>>
): ErpRules.Incoming => ({ method, url: `${url.pathname}${url.search}`, apiKey: headers["x-api-key"] ?? "" })

/**
 * Why the in-memory server that answers `origin` (`https://host[:port]`) refuses a request to `url`, as a refused
 * connection: a request to another origin, or one after the server closed; `undefined` when it takes it.
 *
 * @example
 * ```ts
 * import { WebReply } from "@erp-client/fake-erp"
 *
 * const origin = "https://sandbox.erp.invalid"
 * console.log(WebReply.refusal(origin, new URL(`${origin}/partner/get?id=1`), false)) // => undefined
 * console.log(WebReply.refusal(origin, new URL("https://erp.example.com/partner/get"), false))
 * // => connection refused: the in-memory sandbox answers https://sandbox.erp.invalid, not https://erp.example.com
 * console.log(WebReply.refusal(origin, new URL(`${origin}/partner/get`), true))
 * // => connection refused: the in-memory sandbox is closed
 * ```
 *
 * @since 0.1.0
 * @category Serving
 */
export const refusal = (origin: string, url: URL, closed: boolean): string | undefined =>
  url.origin !== origin
    ? `connection refused: the in-memory sandbox answers ${origin}, not ${url.origin}`
    : closed
    ? "connection refused: the in-memory sandbox is closed"
    : undefined

/**
 * A body that gives its first `sentBytes` bytes, then fails, as a connection closed in the middle of the body does.
 *
 * @example
 * ```ts
 * import { WebReply } from "@erp-client/fake-erp"
 *
 * // Four of ten bytes, then the failure
 * const reader = WebReply.cutStream(new TextEncoder().encode("0123456789"), 4).getReader()
 * const first = await reader.read()
 * console.log(new TextDecoder().decode(first.value)) // => 0123
 * console.log(await reader.read().catch((error: Error) => error.message))
 * // => the sandbox closed the connection after 4 of 10 bytes of the body
 * ```
 *
 * @since 0.1.0
 * @category Serving
 */
export const cutStream = (body: Uint8Array, sentBytes: number): ReadableStream<Uint8Array> => {
  let sent = false
  return new ReadableStream<Uint8Array>({
    // One chunk per pull: the bytes reach the reader before the failure does (an error drops what is still queued).
    pull(controller) {
      if (sent) {
        controller.error(
          new Error(`the sandbox closed the connection after ${sentBytes} of ${body.length} bytes of the body`)
        )
      } else {
        sent = true
        controller.enqueue(body.slice(0, sentBytes))
      }
    }
  })
}

/**
 * What a client on a real connection sees of `reply` (see `Delivery`): a status fetch's `Response` cannot hold (below
 * 200 or above 599) fails as the connection would for a fetch client.
 *
 * @example
 * ```ts
 * import { ErpRules, WebReply } from "@erp-client/fake-erp"
 *
 * // A page of 2 partners as a fetch client gets it, then a connection dropped before any response
 * const erp = ErpRules.make({ partners: 2 })
 * const url = "/partner/list?list_offset=0&list_count=5"
 * const plan = erp.arrive({ method: "GET", url, apiKey: erp.controls.apiKey }, 0).plan()
 * const delivery = plan._tag === "Delay" ? undefined : WebReply.deliver(plan)
 * if (delivery?._tag === "Response") {
 *   const { headers, status } = delivery.response
 *   console.log(status, headers.get("content-type"), headers.get("x-ratelimit-remaining")) // => 200 application/json 99
 * }
 * console.log(WebReply.deliver({ _tag: "Drop" }))
 * // => { _tag: 'Failed', description: 'the sandbox closed the connection before responding' }
 * ```
 *
 * @since 0.1.0
 * @category Serving
 */
export const deliver = (reply: ErpRules.Reply): Delivery => {
  switch (reply._tag) {
    case "Respond": {
      if (reply.status < 200 || reply.status > 599) {
        return {
          _tag: "Failed",
          description: `status ${reply.status} is outside what a fetch Response holds (200 to 599)`
        }
      }
      const headers = new Headers(reply.headers)
      const body = nullBodyStatuses.has(reply.status) ? undefined : reply.body
      if (body !== undefined) {
        if (reply.contentType !== undefined) headers.set("content-type", reply.contentType)
        headers.set("content-length", String(new TextEncoder().encode(body).length))
      }
      return { _tag: "Response", response: new Response(body ?? null, { status: reply.status, headers }) }
    }
    case "Drop":
      return { _tag: "Failed", description: "the sandbox closed the connection before responding" }
    case "CutBody": {
      const headers = new Headers(reply.headers)
      headers.set("content-type", reply.contentType)
      headers.set("content-length", String(reply.body.length))
      return {
        _tag: "Response",
        response: new Response(cutStream(reply.body, reply.sentBytes), { status: reply.status, headers })
      }
    }
    case "Hang":
      return { _tag: "Hang" }
  }
}
