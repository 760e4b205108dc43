import { describe, expect, it } from "@effect/vitest"
import * as ErpRules from "../../src/ErpRules.js"
import * as Envelope from "../../src/internal/envelope.js"
import * as Replies from "../../src/internal/replies.js"
import * as SlidingWindow from "../../src/SlidingWindow.js"

const ENVELOPE = "{\"result\":{\"code\":1,\"message\":null},\"data\":[]}"

const faulted = (fault: ErpRules.Fault, answer = () => ENVELOPE): Replies.Faulted<ErpRules.DurationInput> => ({
  fault,
  headers: { "x-ratelimit-remaining": "7" },
  nowMillis: 1_700_000_000_000,
  answer
})

/** The response a plan describes; fails the test for anything else. */
const respond = (plan: Replies.Plan) => {
  if (plan._tag !== "Respond") throw new Error(`expected a response, got ${plan._tag}`)
  return { status: plan.status, headers: plan.headers, contentType: plan.contentType, body: plan.body ?? "" }
}

describe("internal/replies", () => {
  const replies = Replies.make({
    rateLimit: SlidingWindow.resolve({ limit: 5, resetUnit: "epoch-millis" }),
    messages: Envelope.resolveMessages(undefined),
    tooManyRequestsBody: "envelope",
    toMillis: ErpRules.millis
  })

  it("Status sends an HTML page with the window's headers", () => {
    const response = respond(replies.forFault(faulted({ _tag: "Status", status: 502 })))
    expect(response.status).toBe(502)
    expect(response.contentType).toBe("text/html")
    expect(response.body).toBe("<html><body><h1>502 Bad Gateway</h1></body></html>\n")
    expect(response.headers["x-ratelimit-remaining"]).toBe("7")
  })

  it("TooManyRequests sends the limit in force and a reset after resetAfter, or no headers", () => {
    const limited = respond(replies.forFault(faulted({ _tag: "TooManyRequests", resetAfter: "2 seconds" })))
    expect(limited.status).toBe(429)
    expect(limited.headers).toMatchObject({
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1700000002000"
    })
    const bare = respond(replies.forFault(faulted({ _tag: "TooManyRequests", headers: false })))
    expect(bare.headers["x-ratelimit-reset"]).toBeUndefined()
    expect(JSON.parse(bare.body)).toStrictEqual({ result: { code: 0, message: "Too Many Requests" }, data: null })
  })

  it("MalformedJson cuts the real answer; Delay waits for it; NotEnvelope and UnknownCode replace it", () => {
    let answers = 0
    const answer = () => {
      answers++
      return "{\"result\":{\"code\":1,\"message\":null},\"data\":[{\"id\":1}]}"
    }
    const malformed = respond(replies.forFault(faulted({ _tag: "MalformedJson" }, answer))).body
    expect(answer().startsWith(malformed)).toBe(true)
    expect(() => JSON.parse(malformed)).toThrow()
    // The delayed answer is computed when the delay is over, by whoever waits it out.
    expect(replies.forFault(faulted({ _tag: "Delay", duration: "2 seconds" }, answer))).toStrictEqual({
      _tag: "Delay",
      millis: 2000
    })
    expect(answers).toBe(2)
    expect(respond(replies.forFault(faulted({ _tag: "NotEnvelope", body: [1] }, answer))).body).toBe("[1]")
    const unknown = respond(replies.forFault(faulted({ _tag: "UnknownCode", code: 7 }, answer)))
    expect(JSON.parse(unknown.body).result.code).toBe(7)
    expect(answers).toBe(2)
  })

  it("Redirect keeps the window's headers and sends the location", () => {
    const response = respond(replies.forFault(faulted({ _tag: "Redirect", location: "http://elsewhere.test/" })))
    expect(response.status).toBe(302)
    expect(response.headers).toMatchObject({ location: "http://elsewhere.test/", "x-ratelimit-remaining": "7" })
  })

  it("the connection faults: dropped before a response, cut mid-body (never whole), hung", () => {
    expect(replies.forFault(faulted({ _tag: "DropBeforeResponse" }))).toStrictEqual({ _tag: "Drop" })
    expect(replies.forFault(faulted({ _tag: "Hang" }))).toStrictEqual({ _tag: "Hang" })
    const cut = replies.forFault(faulted({ _tag: "DropMidBody", fraction: 0.3 }, () => "0123456789"))
    expect(cut).toMatchObject({ _tag: "CutBody", status: 200, sentBytes: 3, headers: { "x-ratelimit-remaining": "7" } })
    expect(Replies.statusOf(cut as ErpRules.Reply)).toBe(200)
    expect(Replies.statusOf({ _tag: "Drop" })).toBe(0)
    expect(Replies.cutAt(10, 1)).toBe(9)
    expect(Replies.cutAt(10, 0)).toBe(1)
  })

  it("Outage: its status and body, Retry-After when asked, and no rate-limit headers", () => {
    const html = respond(replies.forFault(faulted({ _tag: "Outage", duration: "1 second", retryAfter: "7" })))
    expect([html.status, html.body, html.headers["retry-after"]]).toStrictEqual([
      503,
      "<html><body><h1>503 Service Unavailable</h1></body></html>\n",
      "7"
    ])
    expect(Object.keys(html.headers).filter((name) => name.startsWith("x-ratelimit"))).toStrictEqual([])
    const envelope = respond(
      replies.forFault(faulted({ _tag: "Outage", duration: "1 second", status: 504, body: "envelope" }))
    )
    expect(JSON.parse(envelope.body)).toStrictEqual({ result: { code: 0, message: "Gateway Timeout" }, data: null })
    expect(envelope.headers["x-ratelimit-remaining"]).toBeUndefined()
    const empty = respond(replies.forFault(faulted({ _tag: "Outage", duration: "1 second", body: "empty" })))
    expect([empty.status, empty.body]).toStrictEqual([503, ""])
  })

  it("retryAfterValue: a string as written, or worked out from now in seconds (rounded up) or as an HTTP date", () => {
    const now = Date.UTC(2030, 5, 1, 12, 0, 0)
    expect(Replies.retryAfterValue("soon", now, ErpRules.millis)).toBe("soon")
    expect(Replies.retryAfterValue({ after: "1500 millis" }, now, ErpRules.millis)).toBe("2")
    expect(Replies.retryAfterValue({ after: "90 seconds", format: "http-date" }, now, ErpRules.millis)).toBe(
      "Sat, 01 Jun 2030 12:01:30 GMT"
    )
  })

  it("TooManyRequests shifts its reset by the limit's resetSkew", () => {
    const skewed = Replies.make({
      rateLimit: SlidingWindow.resolve({ limit: 5, resetUnit: "epoch-millis", resetSkew: "-10 seconds" }),
      messages: Envelope.resolveMessages(undefined),
      tooManyRequestsBody: "empty",
      toMillis: ErpRules.millis
    })
    const limited = respond(skewed.forFault(faulted({ _tag: "TooManyRequests", resetAfter: "2 seconds" })))
    expect(limited.headers["x-ratelimit-reset"]).toBe("1699999992000")
  })
})
