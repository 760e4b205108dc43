import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redis } from "ioredis"
import { type OwnRedis, startRedis } from "../../client/test/redisServer.js"
import { maxInAnyWindow } from "../../client/test/windows.js"
import { erp, type Run, startSandbox } from "./harness.js"

// Three `erp` processes, one key, one sandbox with a strict (scaled) window: through one Redis they keep its limit
// together; each with its own memory limiter they cannot. The shared Redis of this machine is never flushed: each
// run uses its own key prefix and deletes only its own keys.
const LIMIT = 40
const WINDOW_MS = 2_000
const PARTNERS = 1_200
const PAGE_SIZE = 25
const PROCESSES = 3
const REDIS = "redis://127.0.0.1:6379"
const RUN = `erp-test:cli:${process.pid}:${Date.now().toString(36)}`

type Started = Awaited<ReturnType<typeof startSandbox>>
let env: Started
const admin = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 1 })

const deleteKeys = async (pattern: string) => {
  let cursor = "0"
  do {
    const [next, keys] = await admin.scan(cursor, "MATCH", pattern, "COUNT", 1000)
    cursor = next
    if (keys.length > 0) await admin.del(...keys)
  } while (cursor !== "0")
}

beforeAll(async () => {
  env = await startSandbox({
    partners: PARTNERS,
    rateLimit: { limit: LIMIT, window: `${WINDOW_MS} millis`, resetUnit: "epoch-millis" }
  })
})

afterAll(async () => {
  await env?.close()
  await deleteKeys(`${RUN}:*`)
  await admin.quit()
})

const seededLines = () => Array.from({ length: PARTNERS }, (_, i) => JSON.stringify(env.sandbox.partnerAt(i)))

/**
 * How full the server's window was while the export ran: the number of starts in [t, t + window), averaged over
 * every t (1 ms steps) from the first start to the last start minus one window. Every window measured lies inside
 * the export, so neither the first burst nor the short last one skews it; a limiter that idles shows.
 */
const meanOccupancy = (starts: ReadonlyArray<number>, window: number): number => {
  const sorted = [...starts].sort((a, b) => a - b)
  const from = sorted[0]!
  const to = sorted[sorted.length - 1]! - window
  if (to <= from) return sorted.length
  let sum = 0
  let lo = 0
  let hi = 0
  for (let t = from; t <= to; t++) {
    while (hi < sorted.length && sorted[hi]! < t + window) hi++
    while (lo < sorted.length && sorted[lo]! < t) lo++
    sum += hi - lo
  }
  return sum / (to - from + 1)
}

/** Runs the same export in three processes at once and measures what the server saw. */
const exportInThree = async (label: string, redis: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) => {
  await env.run(env.sandbox.resetRateLimits)
  await env.run(env.sandbox.resetStats)
  const runs: Array<Run> = await Promise.all(
    Array.from(
      { length: PROCESSES },
      () =>
        erp(["partners", "list", "--page-size", String(PAGE_SIZE), "--concurrency", "4", ...redis], {
          via: "tsx",
          env: {
            ...env.env,
            ERP_RATE_LIMIT: String(LIMIT),
            ERP_RATE_WINDOW: `${WINDOW_MS} millis`,
            ERP_REDIS_URL: undefined,
            ...extraEnv
          }
        })
    )
  )
  const stats = await env.run(env.sandbox.stats)
  const starts = (await env.run(env.sandbox.requests))
    .filter((r) => r.endpoint === "/partner/list")
    .map((r) => r.timeMillis)
  const span = Math.max(...starts) - Math.min(...starts) + WINDOW_MS
  const occupancy = meanOccupancy(starts, WINDOW_MS)
  const measured = {
    requests: starts.length,
    tooManyRequests: stats.tooManyRequests,
    ratio: occupancy / LIMIT,
    maxInWindow: stats.maxObservedInWindow["/partner/list"] ?? 0
  }
  console.log(
    `${label}: ${PROCESSES} processes, ${measured.requests} list requests in ${span - WINDOW_MS} ms; aggregate ` +
      `${occupancy.toFixed(1)} per ${WINDOW_MS} ms window on average = ${(100 * measured.ratio).toFixed(1)}% of ` +
      `the limit ${LIMIT} (requests / (last - first + window): ` +
      `${(100 * (measured.requests * WINDOW_MS) / span / LIMIT).toFixed(1)}%); 429s: ${measured.tooManyRequests}; ` +
      `most in any window: ${measured.maxInWindow}`
  )
  return { runs, ...measured }
}

describe("three erp processes, one key, one sandbox", () => {
  // How much of the limit they use together is a speed figure: `pnpm bench shared` measures it (docs/benchmarks.md).
  it("through one Redis (--redis): zero 429s, every record once per process", async () => {
    const result = await exportInThree("redis store", ["--redis", REDIS], { ERP_REDIS_PREFIX: `${RUN}:shared:` })
    const expected = seededLines()
    for (const run of result.runs) {
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      expect(run.stdout.trimEnd().split("\n")).toEqual(expected)
    }
    expect(result.tooManyRequests).toBe(0)
    expect(result.maxInWindow).toBeLessThanOrEqual(LIMIT)
    // At least 3 windows of demand, so the limit is tested over a real stretch, not one burst.
    expect(result.requests).toBeGreaterThanOrEqual(3 * LIMIT)
  }, 40_000)

  it("each with its own memory limiter: the server answers 429s (the test above can fail)", async () => {
    const result = await exportInThree("memory store", [])
    for (const run of result.runs) {
      expect(run.code).toBe(0)
      expect(run.stdout.trimEnd().split("\n")).toEqual(seededLines())
    }
    expect(result.tooManyRequests).toBeGreaterThan(0)
    expect(result.maxInWindow).toBeGreaterThan(LIMIT)
  }, 40_000)
})

describe("erp with a Redis that cannot be reached", () => {
  const unreachable = "redis://:cli-redis-pw-DO-NOT-LEAK@127.0.0.1:1"

  it("fails by default: exit 1, one line naming the limiter, no password, nothing sent, no hang", async () => {
    await env.run(env.sandbox.resetStats)
    const started = Date.now()
    const run = await erp(["partners", "get", "--id", "3", "--redis", unreachable], { via: "tsx", env: env.env })
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(run.stderr).toContain("rate limiter's store failed")
    expect(run.stderr).not.toContain("DO-NOT-LEAK")
    expect((await env.run(env.sandbox.stats)).requests).toBe(0)
  })

  it("with ERP_REDIS_ON_FAILURE=local: exports with this process's limit and one warning (with --verbose)", async () => {
    const run = await erp(["partners", "list", "--page-size", "200", "--redis", unreachable, "--verbose"], {
      via: "tsx",
      env: { ...env.env, ERP_REDIS_ON_FAILURE: "local" }
    })
    expect(run.code).toBe(0)
    expect(run.stdout.trimEnd().split("\n")).toEqual(seededLines())
    const warnings = run.stderr.split("\n").filter((line) => line.includes("level=WARN"))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("falling back to this process's own limit")
    expect(run.stderr).not.toContain("DO-NOT-LEAK")
  })

  it("refuses a bad --redis URL as a usage error without printing it", async () => {
    const run = await erp(["partners", "get", "--id", "3", "--redis", "http://:cli-pw-DO-NOT-LEAK@host"], {
      via: "tsx",
      env: env.env
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("ERP_REDIS_URL")
    expect(run.stderr).not.toContain("DO-NOT-LEAK")
  })
})

describe("an export sharing its limit through a Redis that stops for 5 s (a redis-server of the test's own)", () => {
  // Enough pages that the export outlasts the outage even at full pace through the local limit.
  const PAGES = 80
  // 20 per 2 s: a request unanswered past its slot's window and margin (a process starved for a second, as at load 8
  // on two cores) lets the slot's next one go; two seconds of window are room enough (mcp.test.ts says more).
  const STRICT = { limit: 20, windowMillis: 2_000 }
  let own: OwnRedis & { readonly close: () => Promise<void> }
  let strict: Started
  beforeAll(async () => {
    own = await startRedis()
    strict = await startSandbox({
      partners: PAGES * 10,
      rateLimit: { limit: STRICT.limit, window: `${STRICT.windowMillis} millis` }
    })
  })
  afterAll(async () => {
    await strict?.close()
    await own?.close()
  })

  /**
   * `erp partners list --page-size 10 --redis` against the strict sandbox (20 per 2 s, the client told the same),
   * Redis stopped by `stop` from the export's 5th request for 5 s, then `resume`d. What the server saw, from its own
   * arrival log.
   */
  const exportAcrossOutage = async (
    stop: () => void | Promise<void>,
    resume: () => void | Promise<void>,
    extraEnv: Record<string, string> = {}
  ) => {
    await strict.run(strict.sandbox.resetRateLimits)
    const fifth = strict.listRequests(5)
    const run = erp(["partners", "list", "--page-size", "10", "--redis", own.url, "--verbose"], {
      via: "node",
      env: {
        ...strict.env,
        ERP_RATE_LIMIT: String(STRICT.limit),
        ERP_RATE_WINDOW: `${STRICT.windowMillis} millis`,
        ERP_REDIS_URL: undefined,
        ERP_REDIS_PREFIX: `${RUN}:outage:${Math.random().toString(36).slice(2)}:`,
        // A freeze is noticed after 2 s; a machine at load 8 does not starve a call that long (an outage of its own).
        ERP_REDIS_TIMEOUT: "2",
        ...extraEnv
      }
    })
    await fifth
    await stop()
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    await resume()
    const done = await run
    const arrivals = (await strict.run(strict.sandbox.requests)).filter((r) => r.endpoint === "/partner/list")
    const offsets = arrivals.map((r) => Number(r.query.find(([name]) => name === "list_offset")?.[1]))
    return {
      run: done,
      statuses: [...new Set(arrivals.map((r) => r.status))],
      // Each page asked for once: a page asked twice was retried, after a 429 or a failure.
      pagesOnce: new Set(offsets).size === offsets.length,
      pages: offsets.length,
      maxInWindow: maxInAnyWindow(arrivals.map((r) => r.timeMillis), STRICT.windowMillis - 1),
      lines: (text: string) => done.stderr.split("\n").filter((line) => line.includes(text))
    }
  }
  const seeded = () => Array.from({ length: PAGES * 10 }, (_, i) => JSON.stringify(strict.sandbox.partnerAt(i)))

  for (
    const [how, stop, resume] of [
      ["frozen (SIGSTOP)", () => own.freeze(), () => own.thaw()],
      ["shut down and started again, empty", () => own.stop(), () => own.start()]
    ] as const
  ) {
    it(`${how}: the export waits for it and goes on, exit 0, every record once, no 429`, async () => {
      const seen = await exportAcrossOutage(stop, resume)
      expect(seen.run.code, seen.run.stderr).toBe(0)
      expect(seen.run.stdout.trimEnd().split("\n")).toEqual(seeded())
      expect(seen.statuses).toEqual([200])
      expect(seen.pagesOnce).toBe(true)
      expect(seen.maxInWindow).toBeLessThanOrEqual(STRICT.limit)
      // Said once when it started and once when it ended.
      expect(seen.lines("level=WARN")).toHaveLength(1)
      expect(seen.lines("level=WARN")[0]).toContain("requests wait up to 10 s for it")
      expect(seen.lines("answers again after")).toHaveLength(1)
    }, 60_000)
  }

  it(
    "past the grace with ERP_REDIS_ON_FAILURE=local: its own limit meanwhile, one warning, one return, no 429",
    async () => {
      const seen = await exportAcrossOutage(() => own.freeze(), () => own.thaw(), {
        ERP_REDIS_ON_FAILURE: "local",
        ERP_REDIS_GRACE: "1"
      })
      expect(seen.run.code, seen.run.stderr).toBe(0)
      expect(seen.run.stdout.trimEnd().split("\n")).toEqual(seeded())
      expect(seen.statuses).toEqual([200])
      expect(seen.pagesOnce).toBe(true)
      expect(seen.maxInWindow).toBeLessThanOrEqual(STRICT.limit)
      expect(seen.lines("level=WARN")).toHaveLength(1)
      expect(seen.lines("level=WARN")[0]).toContain("then fall back to this process's own limit")
      expect(seen.lines("answers again after")).toHaveLength(1)
    },
    60_000
  )
})
