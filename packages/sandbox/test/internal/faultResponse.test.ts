import type { HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as Http from "node:http"
import { Fault, RateLimit } from "../../src/index.js"
import * as Envelope from "../../src/internal/envelope.js"
import * as FaultResponse from "../../src/internal/faultResponse.js"
import * as RequestLog from "../../src/internal/requestLog.js"

const bodyText = (response: HttpServerResponse.HttpServerResponse): string =>
  response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""

const faulted = (fault: Fault.Fault, answer = () => "{\"result\":{\"code\":1,\"message\":null},\"data\":[]}") => ({
  fault,
  headers: { "x-ratelimit-remaining": "7" },
  nowMillis: 1_700_000_000_000,
  draft: RequestLog.make(0).begin({
    method: "GET",
    endpoint: "/partner/list",
    query: [],
    keyValid: true,
    timeMillis: 0
  }),
  // Only the faults that cut the socket touch it; none of these do.
  response: undefined as unknown as Http.ServerResponse,
  answer
})

describe("internal/faultResponse", () => {
  const responder = FaultResponse.make({
    rateLimit: RateLimit.resolve({ limit: 5, resetUnit: "epoch-millis" }),
    messages: Envelope.resolveMessages(undefined),
    tooManyRequestsBody: "envelope"
  })

  it.effect("Status sends an HTML page with the window's headers", () =>
    Effect.gen(function*() {
      const response = yield* responder.serve(faulted(Fault.Fault.Status({ status: 502 })))
      expect(response.status).toBe(502)
      expect(bodyText(response)).toBe("<html><body><h1>502 Bad Gateway</h1></body></html>\n")
      expect(response.headers["x-ratelimit-remaining"]).toBe("7")
    }))

  it.effect("TooManyRequests sends the limit in force and a reset after resetAfter, or no headers", () =>
    Effect.gen(function*() {
      const limited = yield* responder.serve(faulted(Fault.Fault.TooManyRequests({ resetAfter: "2 seconds" })))
      expect(limited.status).toBe(429)
      expect(limited.headers).toMatchObject({
        "x-ratelimit-limit": "5",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "1700000002000"
      })
      const bare = yield* responder.serve(faulted(Fault.Fault.TooManyRequests({ headers: false })))
      expect(bare.headers["x-ratelimit-reset"]).toBeUndefined()
      expect(JSON.parse(bodyText(bare))).toStrictEqual({
        result: { code: 0, message: "Too Many Requests" },
        data: null
      })
    }))

  it.effect("MalformedJson cuts the real answer; Delay sends it whole; NotEnvelope and UnknownCode replace it", () =>
    Effect.gen(function*() {
      let answers = 0
      const answer = () => {
        answers++
        return "{\"result\":{\"code\":1,\"message\":null},\"data\":[{\"id\":1}]}"
      }
      const malformed = bodyText(yield* responder.serve(faulted(Fault.Fault.MalformedJson(), answer)))
      expect(answer().startsWith(malformed)).toBe(true)
      expect(() => JSON.parse(malformed)).toThrow()
      const delayed = yield* responder.serve(faulted(Fault.Fault.Delay({ duration: 0 }), answer))
      expect(bodyText(delayed)).toBe(answer())
      expect(answers).toBe(4)
      const notEnvelope = yield* responder.serve(faulted(Fault.Fault.NotEnvelope({ body: [1] }), answer))
      expect(bodyText(notEnvelope)).toBe("[1]")
      const unknown = yield* responder.serve(faulted(Fault.Fault.UnknownCode({ code: 7 }), answer))
      expect(JSON.parse(bodyText(unknown)).result.code).toBe(7)
      expect(answers).toBe(4)
    }))

  it.effect("Redirect keeps the window's headers and sends the location", () =>
    Effect.gen(function*() {
      const response = yield* responder.serve(faulted(Fault.Fault.Redirect({ location: "http://elsewhere.test/" })))
      expect(response.status).toBe(302)
      expect(response.headers).toMatchObject({ location: "http://elsewhere.test/", "x-ratelimit-remaining": "7" })
    }))

  it("truncatedResponse: the full Content-Length, part of the body, never all of it", () => {
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
    const raw = decode(FaultResponse.truncatedResponse({ "x-a": "1" }, "0123456789", 0.3))
    expect(raw).toBe("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\nx-a: 1\r\n\r\n012")
    expect(decode(FaultResponse.truncatedResponse({}, "0123456789", 1)).endsWith("\r\n\r\n012345678")).toBe(true)
    expect(decode(FaultResponse.truncatedResponse({}, "0123456789", 0)).endsWith("\r\n\r\n0")).toBe(true)
  })

  it.effect("Outage: its status and body, Retry-After when asked, and no rate-limit headers", () =>
    Effect.gen(function*() {
      const html = yield* responder.serve(faulted(Fault.Fault.Outage({ duration: "1 second", retryAfter: "7" })))
      expect([html.status, bodyText(html), html.headers["retry-after"]]).toStrictEqual([
        503,
        "<html><body><h1>503 Service Unavailable</h1></body></html>\n",
        "7"
      ])
      expect(Object.keys(html.headers).filter((name) => name.startsWith("x-ratelimit"))).toStrictEqual([])
      const envelope = yield* responder.serve(
        faulted(Fault.Fault.Outage({ duration: "1 second", status: 504, body: "envelope" }))
      )
      expect(JSON.parse(bodyText(envelope))).toStrictEqual({
        result: { code: 0, message: "Gateway Timeout" },
        data: null
      })
      expect(envelope.headers["x-ratelimit-remaining"]).toBeUndefined()
      const empty = yield* responder.serve(faulted(Fault.Fault.Outage({ duration: "1 second", body: "empty" })))
      expect([empty.status, bodyText(empty)]).toStrictEqual([503, ""])
    }))

  it("retryAfterValue: a string as written, or worked out from now in seconds (rounded up) or as an HTTP date", () => {
    const now = Date.UTC(2030, 5, 1, 12, 0, 0)
    expect(FaultResponse.retryAfterValue("soon", now)).toBe("soon")
    expect(FaultResponse.retryAfterValue({ after: "1500 millis" }, now)).toBe("2")
    expect(FaultResponse.retryAfterValue({ after: "90 seconds", format: "http-date" }, now)).toBe(
      "Sat, 01 Jun 2030 12:01:30 GMT"
    )
  })

  it.effect("TooManyRequests shifts its reset by the limit's resetSkew", () =>
    Effect.gen(function*() {
      const skewed = FaultResponse.make({
        rateLimit: RateLimit.resolve({ limit: 5, resetUnit: "epoch-millis", resetSkew: "-10 seconds" }),
        messages: Envelope.resolveMessages(undefined),
        tooManyRequestsBody: "empty"
      })
      const limited = yield* skewed.serve(faulted(Fault.Fault.TooManyRequests({ resetAfter: "2 seconds" })))
      expect(limited.headers["x-ratelimit-reset"]).toBe("1699999992000")
    }))
})
