import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redis } from "ioredis"
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
  it("through one Redis (--redis): zero 429s, every record once per process, at least 90% of the limit", async () => {
    const result = await exportInThree("redis store", ["--redis", REDIS], { ERP_REDIS_PREFIX: `${RUN}:shared:` })
    const expected = seededLines()
    for (const run of result.runs) {
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      expect(run.stdout.trimEnd().split("\n")).toEqual(expected)
    }
    expect(result.tooManyRequests).toBe(0)
    expect(result.maxInWindow).toBeLessThanOrEqual(LIMIT)
    // At least 3 windows of demand, so the rate is measured over a real stretch, not one burst.
    expect(result.requests).toBeGreaterThanOrEqual(3 * LIMIT)
    expect(result.ratio).toBeGreaterThanOrEqual(0.9)
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
