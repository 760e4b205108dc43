/**
 * The sandbox's core served by an Effect HttpServer on Node (`@effect/platform-node`'s): each reply becomes a
 * response, or a socket destroyed before or in the middle of one, or no answer until the client goes.
 */
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Sandbox from "../Sandbox.js"
import type * as Core from "./core.js"
import * as Edition from "./edition.js"
import { HttpServer, HttpServerRequest, HttpServerResponse } from "./edition.js"

/**
 * Cuts the connection, optionally after raw bytes, bypassing the Node response object so the platform can still
 * close its side cleanly. The fiber ends when the socket is closed (the platform interrupts it as a client abort).
 *
 * @internal
 */
export const cut = (response: Edition.ServerResponse, raw: Uint8Array | undefined): Effect.Effect<never> =>
  Edition.async<never>((resume) => {
    const socket = response.socket
    if (socket === null || socket.destroyed) {
      resume(Effect.interrupt)
      return
    }
    const onClose = () => resume(Effect.interrupt)
    socket.once("close", onClose)
    if (raw === undefined) socket.destroy()
    else socket.write(raw, () => socket.destroy())
    return Effect.sync(() => socket.off("close", onClose))
  })

/**
 * The bytes of a `CutBody` reply on the wire: the status line, the headers with the whole body's `Content-Length`, and
 * the first `sentBytes` bytes of the body.
 *
 * @internal
 */
export const truncatedResponse = (reply: Extract<ErpRules.Reply, { readonly _tag: "CutBody" }>): Uint8Array => {
  const head = [
    `HTTP/1.1 ${reply.status} OK`,
    `content-type: ${reply.contentType}`,
    `content-length: ${reply.body.length}`,
    ...Object.entries(reply.headers).map(([name, value]) => `${name}: ${value}`),
    "",
    ""
  ].join("\r\n")
  const headBytes = new TextEncoder().encode(head)
  const raw = new Uint8Array(headBytes.length + reply.sentBytes)
  raw.set(headBytes, 0)
  raw.set(reply.body.subarray(0, reply.sentBytes), headBytes.length)
  return raw
}

const deliver = (
  reply: ErpRules.Reply,
  response: Edition.ServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  switch (reply._tag) {
    case "Respond":
      return Effect.succeed(
        reply.body === undefined
          ? HttpServerResponse.empty({ status: reply.status, headers: reply.headers })
          : HttpServerResponse.text(reply.body, {
            status: reply.status,
            headers: reply.headers,
            ...(reply.contentType === undefined ? {} : { contentType: reply.contentType })
          })
      )
    case "Drop":
      return cut(response, undefined)
    case "CutBody":
      return cut(response, truncatedResponse(reply))
    case "Hang":
      return Effect.never
  }
}

/**
 * The path of the sandbox's own report: `GET /_sandbox/stats` answers `Sandbox.stats` as JSON, with `summary`, the lines
 * `ErpRules.describeStats` writes.
 *
 * @internal
 */
export const STATS_PATH = "/_sandbox/stats"

/**
 * The path that changes the sandbox's partners between runs, for a person or a script (`erp partners changes`, its
 * benchmark): `POST /_sandbox/partners?insert=N[&at=P]&delete=ID,ID&rename=ID,ID` inserts `N` new partners before list
 * position `P` (default the end), deletes and renames (` (renamed)` added to the company name) partners by id, and
 * answers what it did as JSON: `{"inserted":[ids],"deleted":n,"renamed":n}`.
 *
 * @internal
 */
export const PARTNERS_PATH = "/_sandbox/partners"

// `1,2,3` as ids; anything else in the list is left out.
const idsOf = (text: string | null): Array<number> =>
  (text ?? "").split(",").map((id) => Number(id.trim())).filter((id) => id !== 0 && Number.isSafeInteger(id))

const changePartners = (core: Core.Core, url: string) =>
  Effect.gen(function*() {
    const query = new URL(url, "http://sandbox").searchParams
    const insert = Number(query.get("insert") ?? 0)
    if (!(Number.isSafeInteger(insert) && insert >= 0)) {
      return Edition.jsonResponse({ error: "insert must be a whole number" }, { status: 400 })
    }
    const size = yield* core.controls.size
    const at = query.get("at") === null ? size : Number(query.get("at"))
    const inserted = insert === 0 ? [] : yield* core.controls.insertPartners(insert, Number.isFinite(at) ? at : size)
    const deleted = yield* core.controls.deletePartners(idsOf(query.get("delete")))
    const renamed = yield* core.controls.renamePartners(idsOf(query.get("rename")))
    return Edition.jsonResponse({ inserted, deleted, renamed })
  })

/**
 * Serves `core` on the `HttpServer` provided until the scope closes; closing it cuts the requests still open (a hung
 * one would otherwise keep the server from closing until its client gives up).
 *
 * @internal
 */
export const serve = (core: Core.Core): Effect.Effect<Sandbox.Service, never, HttpServer.HttpServer | Scope.Scope> =>
  Effect.gen(function*() {
    const open = new Set<Edition.ServerResponse>()
    // The platform runs an app uninterruptibly (its router makes each route interruptible): a handler must be
    // interruptible for the client going away to end a hung request.
    const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // What the sandbox saw, for a person or a script pointing their own code at it: not an ERP endpoint, not counted,
      // not limited, no key needed (the sandbox listens on loopback by default).
      if (request.method === "GET" && request.url.split("?")[0] === STATS_PATH) {
        return Effect.map(core.controls.stats, (stats) =>
          Edition.jsonResponse({
            ...stats,
            summary: ErpRules.describeStats(stats, core.controls.rateLimit)
          }))
      }
      if (request.method === "POST" && request.url.split("?")[0] === PARTNERS_PATH) {
        return changePartners(core, request.url)
      }
      const response = Edition.serverResponse(request)
      return Effect.acquireUseRelease(
        Effect.sync(() => open.add(response)),
        () =>
          core.handle(
            { method: request.method, url: request.url, apiKey: request.headers["x-api-key"] ?? "" },
            (reply) => deliver(reply, response)
          ),
        () => Effect.sync(() => open.delete(response))
      )
    }).pipe(Effect.interruptible)

    const server = yield* HttpServer.HttpServer
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const response of open) response.socket?.destroy()
      })
    )
    yield* HttpServer.serveEffect(app)

    const address = Edition.tcpAddress(server)
    const port = address?.port ?? 0
    const hostname = address?.hostname ?? "127.0.0.1"
    // A wildcard address is not something a client can connect to: point it at loopback.
    const reachable = hostname === "0.0.0.0" || hostname === "::" ? "127.0.0.1" : hostname
    return {
      baseUrl: `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`,
      port,
      ...core.controls
    }
  })
