import { describe, expect, it } from "@effect/vitest"
import * as ErpRules from "../src/ErpRules.js"
import * as WebReply from "../src/WebReply.js"

const ORIGIN = "https://sandbox.erp.invalid"

/** The web response of a delivery; fails the test for anything else. */
const responseOf = (delivery: WebReply.Delivery): Response => {
  if (delivery._tag !== "Response") throw new Error(`expected a response, got ${delivery._tag}`)
  return delivery.response
}

describe("WebReply", () => {
  it("a request as the rules take it: path and query as sent, the key from the lower-case header", () => {
    const url = new URL(`${ORIGIN}/partner/get?company_name=A%26B&id=7`)
    expect(WebReply.incoming("GET", url, { "x-api-key": "k-1", accept: "application/json" })).toStrictEqual({
      method: "GET",
      url: "/partner/get?company_name=A%26B&id=7",
      apiKey: "k-1"
    })
    expect(WebReply.incoming("POST", new URL(`${ORIGIN}/x`), {}).apiKey).toBe("")
  })

  it("refuses another origin (port included) and a closed server, takes the rest", () => {
    expect(WebReply.refusal(ORIGIN, new URL(`${ORIGIN}/partner/list`), false)).toBeUndefined()
    expect(WebReply.refusal(ORIGIN, new URL("https://sandbox.erp.invalid:8443/partner/list"), false)).toBe(
      "connection refused: the in-memory sandbox answers https://sandbox.erp.invalid, not https://sandbox.erp.invalid:8443"
    )
    expect(WebReply.refusal(ORIGIN, new URL(`${ORIGIN}/partner/list`), true)).toBe(
      "connection refused: the in-memory sandbox is closed"
    )
  })

  it("a response: its headers, content type, and content length in bytes (not characters)", async () => {
    const body = "{\"name\":\"Kovács & Társa\"}"
    const response = responseOf(WebReply.deliver({
      _tag: "Respond",
      status: 200,
      headers: { "x-ratelimit-remaining": "9" },
      contentType: "application/json",
      body
    }))
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("content-length")).toBe(String(new TextEncoder().encode(body).length))
    expect(response.headers.get("content-length")).not.toBe(String(body.length))
    expect(response.headers.get("x-ratelimit-remaining")).toBe("9")
    expect(await response.text()).toBe(body)
  })

  it("no body for the statuses that have none, nor a content type or length; a status fetch cannot hold fails", async () => {
    for (const status of [204, 205, 304]) {
      const response = responseOf(
        WebReply.deliver({ _tag: "Respond", status, headers: {}, contentType: "text/plain", body: "ignored" })
      )
      expect(response.status).toBe(status)
      expect(response.headers.get("content-length")).toBeNull()
      expect(response.headers.get("content-type")).toBeNull()
      expect(await response.text()).toBe("")
    }
    // A body the rules leave out is no body, whatever the status.
    const empty = responseOf(WebReply.deliver({ _tag: "Respond", status: 429, headers: {} }))
    expect([empty.headers.get("content-length"), await empty.text()]).toStrictEqual([null, ""])
    for (const status of [101, 199, 600]) {
      expect(WebReply.deliver({ _tag: "Respond", status, headers: {} })).toStrictEqual({
        _tag: "Failed",
        description: `status ${status} is outside what a fetch Response holds (200 to 599)`
      })
    }
  })

  it("a body cut mid-way: the whole length declared, the first bytes given, then the read fails", async () => {
    const body = new TextEncoder().encode("{\"result\":{\"code\":1,\"message\":null},\"data\":[1,2,3]}")
    const response = responseOf(WebReply.deliver({
      _tag: "CutBody",
      status: 200,
      headers: { "x-ratelimit-limit": "100" },
      contentType: "application/json",
      body,
      sentBytes: 10
    }))
    expect(response.headers.get("content-length")).toBe(String(body.length))
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("x-ratelimit-limit")).toBe("100")
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe("{\"result\":")
    await expect(reader.read()).rejects.toThrow(
      `the sandbox closed the connection after 10 of ${body.length} bytes of the body`
    )
  })

  it("a dropped connection fails before any response; a hang is nothing", () => {
    expect(WebReply.deliver({ _tag: "Drop" })).toStrictEqual({
      _tag: "Failed",
      description: "the sandbox closed the connection before responding"
    })
    expect(WebReply.deliver({ _tag: "Hang" })).toStrictEqual({ _tag: "Hang" })
  })

  it("carries the rules' answer as sent: the rules' status, headers and body", async () => {
    const erp = ErpRules.make({ partners: 3, rateLimit: { limit: 5, window: "1 second", resetUnit: "seconds" } })
    const plan = erp.arrive({ method: "GET", url: "/partner/get?id=2", apiKey: erp.controls.apiKey }, 0).plan()
    if (plan._tag !== "Respond") throw new Error(`expected a response, got ${plan._tag}`)
    const response = responseOf(WebReply.deliver(plan))
    expect(response.status).toBe(plan.status)
    for (const [name, value] of Object.entries(plan.headers)) expect(response.headers.get(name)).toBe(value)
    expect(await response.text()).toBe(plan.body)
    expect(JSON.parse(plan.body!).data.id).toBe(2)
  })
})
