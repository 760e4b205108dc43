import { describe, expect, it } from "@effect/vitest"
import * as Net from "node:net"
import { erp } from "./harness.js"

// `erp sandbox` started as a subprocess with the flags that make it differ from our defaults where the contract is
// silent, probed over HTTP at the base URL it prints, then interrupted.

const headers = { "X-API-KEY": "sandbox-key" }

// What the last sandbox started by `serveWhile` has printed so far.
let printedOut = ""

/** Runs `erp sandbox ARGS`, runs `probe` against the base URL it prints, then interrupts it. */
const serveWhile = (args: ReadonlyArray<string>, probe: (baseUrl: string) => Promise<void>) => {
  let resolveUrl: (url: string) => void = () => {}
  const printed = new Promise<string>((resolve) => (resolveUrl = resolve))
  return erp(["sandbox", "--port", "0", ...args], {
    via: "node",
    onStdout: (text) => {
      printedOut = text
      const url = /export ERP_BASE_URL=(\S+)/.exec(text)
      if (url !== null) resolveUrl(url[1]!)
    },
    interruptWhen: printed.then(probe)
  })
}

const get = async (baseUrl: string, path: string) => {
  const response = await fetch(`${baseUrl}${path}`, { headers })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const ids = (text: string): Array<number> => (JSON.parse(text).data as Array<{ id: number }>).map((p) => p.id)

describe("erp sandbox: servers that differ where the contract is silent", () => {
  it("--hidden-position and --max-list-count-from: 99 of 100 on the first page, then 50 from the 3rd page", async () => {
    const run = await serveWhile(
      ["--partners", "250", "--no-rate-limit", "--max-list-count", "100", "--hidden-position", "5"].concat(
        ["--max-list-count-from", "3:50"]
      ),
      async (baseUrl) => {
        const first = ids((await get(baseUrl, "/partner/list?list_offset=0&list_count=100")).text)
        expect(first).toHaveLength(99)
        expect(first).not.toContain(6)
        expect(ids((await get(baseUrl, "/partner/list?list_offset=100&list_count=100")).text)).toHaveLength(100)
        const third = ids((await get(baseUrl, "/partner/list?list_offset=200&list_count=100")).text)
        expect(third).toStrictEqual(Array.from({ length: 50 }, (_, i) => 201 + i))
        expect(JSON.parse((await get(baseUrl, "/partner/get?id=6")).text).result.message).toBe("Not found")
      }
    )
    expect(run.code).toBe(130)
  })

  it("--ignore-offset and --hidden-rate: the same first page at any offset, shorter than asked", async () => {
    const run = await serveWhile(["--partners", "40", "--ignore-offset", "--hidden-rate", "0.5"], async (baseUrl) => {
      const first = ids((await get(baseUrl, "/partner/list?list_offset=0&list_count=20")).text)
      expect(first.length).toBeLessThan(20)
      expect(first.length).toBeGreaterThan(0)
      expect(ids((await get(baseUrl, "/partner/list?list_offset=20&list_count=20")).text)).toStrictEqual(first)
    })
    expect(run.code).toBe(130)
  })

  it("--ignore-conditions unknown and all: the whole list for a field it does not know, or for any", async () => {
    const list = "/partner/list?list_offset=0&list_count=40"
    const unknown = await serveWhile(["--partners", "40", "--ignore-conditions", "unknown"], async (baseUrl) => {
      const all = ids((await get(baseUrl, list)).text)
      expect(all).toHaveLength(40)
      expect(ids((await get(baseUrl, `${list}&list_condition[nonexistent_field]=1`)).text)).toStrictEqual(all)
      const customers = ids((await get(baseUrl, `${list}&list_condition[is_customer]=1`)).text)
      expect(customers.length).toBeGreaterThan(0)
      expect(customers.length).toBeLessThan(40)
    })
    expect(unknown.code).toBe(130)
    const every = await serveWhile(["--partners", "40", "--ignore-conditions", "all"], async (baseUrl) => {
      expect(ids((await get(baseUrl, `${list}&list_condition[is_customer]=1`)).text)).toHaveLength(40)
    })
    expect(every.code).toBe(130)
  })

  it("--inject N in a row, then --outage with --retry-after: truncated bodies, then 503s with Retry-After", async () => {
    const run = await serveWhile(
      ["--inject", "malformed", "--inject-times", "2", "--outage", "60", "--outage-after", "1", "--retry-after", "7"],
      async (baseUrl) => {
        for (let i = 0; i < 2; i++) {
          const cut = await get(baseUrl, "/partner/list?list_offset=0&list_count=5")
          expect(cut.status).toBe(200)
          expect(() => JSON.parse(cut.text)).toThrow()
        }
        for (const path of ["/partner/list?list_offset=0&list_count=5", "/partner/get?id=1"]) {
          const down = await get(baseUrl, path)
          expect(down.status).toBe(503)
          expect(down.text).toBe("<html><body><h1>503 Service Unavailable</h1></body></html>\n")
          expect(down.headers.get("retry-after")).toBe("7")
          expect(down.headers.get("x-ratelimit-limit")).toBeNull()
        }
      }
    )
    expect(run.code).toBe(130)
  })

  it("--outage-endpoint, --outage-status, --outage-body and --retry-after-date: one endpoint out", async () => {
    const args = ["--outage", "60", "--outage-endpoint", "partner/get", "--outage-status", "502"].concat(
      ["--outage-body", "envelope", "--retry-after", "10", "--retry-after-date"]
    )
    const run = await serveWhile(args, async (baseUrl) => {
      expect((await get(baseUrl, "/partner/list?list_offset=0&list_count=5")).status).toBe(200)
      const before = Date.now()
      const down = await get(baseUrl, "/partner/get?id=1")
      expect(down.status).toBe(502)
      expect(JSON.parse(down.text)).toStrictEqual({ result: { code: 0, message: "Bad Gateway" }, data: null })
      // An HTTP date ten seconds after the answer (whole seconds, so within a second of it).
      const date = down.headers.get("retry-after")!
      expect(date).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/)
      expect(Date.parse(date)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 9_000)
      expect(Date.parse(date)).toBeLessThanOrEqual(Date.now() + 10_000)
    })
    expect(run.code).toBe(130)
  })

  it("--odd-kind for numbers a float would change, ids beyond a double and repeated ids: written as shown", async () => {
    const kinds = ["number-beyond-double", "decimal-as-written", "id-beyond-double", "duplicate-id"]
    const args = ["--partners", "40", "--odd-rate", "1", ...kinds.flatMap((kind) => ["--odd-kind", kind])]
    const run = await serveWhile(args, async (baseUrl) => {
      const { text } = await get(baseUrl, "/partner/list?list_offset=0&list_count=40")
      expect(text).toContain("\"credit_limit\":12345678901234567890,")
      expect(text).toContain("\"ledger_ref\":9007199254740993")
      expect(text).toContain("\"balance\":1.10,\"rate\":1e2,\"discount\":-0.0}")
      const bigIds = [...text.matchAll(/\{"id":(\d+),/g)].map((match) => match[1]!)
      expect(bigIds).toHaveLength(40)
      // 12345678901234567890 plus 1000 times the index: twenty digits ending in 890.
      expect(bigIds.some((id) => /^1234567890123\d{4}890$/.test(id))).toBe(true)
      expect(new Set(bigIds).size).toBeLessThan(40)
    })
    expect(run.code).toBe(130)
  })

  it("--reset-skew: X-RateLimit-Reset an hour in the past, on answers and 429s", async () => {
    const run = await serveWhile(["--limit", "1", "--reset-skew", "-3600"], async (baseUrl) => {
      const before = Date.now()
      const allowed = await get(baseUrl, "/partner/get?id=1")
      const limited = await get(baseUrl, "/partner/get?id=1")
      expect([allowed.status, limited.status]).toStrictEqual([200, 429])
      for (const reply of [allowed, limited]) {
        const reset = Number(reply.headers.get("x-ratelimit-reset"))
        expect(reset).toBeGreaterThanOrEqual(Math.ceil((before + 30_000 - 3_600_000) / 1000))
        expect(reset).toBeLessThanOrEqual(Math.ceil((Date.now() + 30_000 - 3_600_000) / 1000))
      }
    })
    expect(run.code).toBe(130)
  })

  it("a malformed --max-list-count-from or --hidden-position, or --retry-after-date alone, is a usage error", async () => {
    const step = await erp(["sandbox", "--max-list-count-from", "4-50"], { via: "node" })
    expect([step.code, step.stderr]).toStrictEqual([
      2,
      "erp: --max-list-count-from takes N:MAX (N and MAX from 1), got 4-50\n"
    ])
    const position = await erp(["sandbox", "--hidden-position", "-1"], { via: "node" })
    expect([position.code, position.stderr]).toStrictEqual([
      2,
      "erp: --hidden-position takes a list position from 0, got -1\n"
    ])
    const date = await erp(["sandbox", "--retry-after-date"], { via: "node" })
    expect([date.code, date.stderr]).toStrictEqual([2, "erp: --retry-after-date needs --retry-after\n"])
  })
})

describe("erp sandbox reports what it saw", () => {
  it("at GET /_sandbox/stats, on SIGUSR1 and when it stops: requests by endpoint and status, refused keys, 429s, faults", async () => {
    let pid = 0
    const run = await serveWhile(
      ["--partners", "20", "--limit", "3", "--window", "30"],
      async (baseUrl) => {
        for (const id of [1, 2, 3, 4]) await get(baseUrl, `/partner/get?id=${id}`)
        await fetch(`${baseUrl}/partner/list?list_offset=0&list_count=5`, { headers: { "X-API-KEY": "stolen" } })
        const stats = await (await fetch(`${baseUrl}/_sandbox/stats`)).json() as { summary: Array<string> }
        expect(stats).toMatchObject({
          requests: 5,
          byEndpoint: { "/partner/get": 4, "/partner/list": 1 },
          byStatus: { "200": 4, "429": 1 },
          tooManyRequests: 1,
          refusedKeys: 1
        })
        expect(stats.summary).toEqual([
          "5 requests: /partner/get 4, /partner/list 1",
          "by status: 200 4, 429 1",
          "1 with a refused key, 1 answered 429, no fault served",
          "at most 4 requests of one key in any 30 s window: /partner/get 4, /partner/list 1 (limit 3)"
        ])
        // The report is not a request of the ERP's: asking again counts nothing.
        expect((await (await fetch(`${baseUrl}/_sandbox/stats`)).json() as { requests: number }).requests).toBe(5)
        pid = Number(/kill -USR1 (\d+)/.exec(printedOut)?.[1])
        process.kill(pid, "SIGUSR1")
        for (let i = 0; i < 100 && !printedOut.includes("sandbox so far:"); i++) {
          await new Promise((r) => setTimeout(r, 20))
        }
      }
    )
    expect(pid).toBeGreaterThan(0)
    expect(run.code).toBe(130)
    const report = run.stdout.slice(run.stdout.indexOf("sandbox stopped:"))
    expect(run.stdout).toContain("sandbox so far:\n  5 requests: /partner/get 4, /partner/list 1")
    expect(report).toBe(
      "sandbox stopped:\n  5 requests: /partner/get 4, /partner/list 1\n  by status: 200 4, 429 1\n" +
        "  1 with a refused key, 1 answered 429, no fault served\n" +
        "  at most 4 requests of one key in any 30 s window: /partner/get 4, /partner/list 1 (limit 3)\n"
    )
  })
})

describe("erp sandbox --port on a port in use", () => {
  it("fails with one line naming the port and that it is taken, exit 1", async () => {
    const taken = Net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as Net.AddressInfo).port
    try {
      const run = await erp(["sandbox", "--port", String(port)], { via: "node" })
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe(
        `erp: port ${port} on 127.0.0.1 is taken: another program listens on it (pick another with --port, or ` +
          "--port 0 for a free one)\n"
      )
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})
