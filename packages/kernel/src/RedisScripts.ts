/**
 * The shared limiter's Redis scripts and values, which every process on the same Redis, prefix and key runs alike,
 * whichever edition it is: the fixed-window counter (the slots and the ticket), the holds that only grow (pauses, busy
 * slots), a slot's in-flight mark and its end, the learned limit's compare-and-set and the log that keeps it. Keys:
 * `${prefix}erp:${keyId}:${endpoint}:ticket`, `…:slot:${n}`, `…:hold`, `…:slot:${n}:hold`, `…:learned` and `…:log`
 * (docs/rate-limit.md, "Through Redis").
 *
 * @since 0.1.0
 */
import type { Learned } from "./ServerLimit.js"

/**
 * The fixed-window counter of `@effect/experimental/RateLimiter/Redis`, as it is: the memory store's semantics
 * (count, and a PX time to live that grows by `refill * tokens`, so `RateLimiter.consume` computes the same delay from
 * it), atomic, so the limit holds across processes (docs/ARCHITECTURE.md, "Rate limit"). It is reproduced rather than
 * reached through `RedisStore.layerStore` because that layer owns its connection in a way a failure policy cannot live
 * with: no "error" listener, and a release by `quit()`, which rejects while the connection is down.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const FIXED_WINDOW_LUA = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refillms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key))

if not current then
  local nextpttl = refillms * tokens
  redis.call("SET", key, tokens, "PX", nextpttl)
  return { tokens, nextpttl }
end

local currentpttl = tonumber(redis.call("PTTL", key) or "0")
local next = current + tokens
if limit and next > limit then
  return { next, currentpttl }
end

local nextpttl = currentpttl + (refillms * tokens)
redis.call("SET", key, next, "PX", nextpttl)
return { next, nextpttl }
`

// Redis's own clock, in milliseconds: the log's times are Redis's, so processes whose clocks disagree share one log.
// Before Redis 5 a script must ask to replicate its effects before it writes after reading the time.
const redisNow = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`

/**
 * Ours: a hold (an endpoint paused for the server, or a slot busy a window after its request) only ever grows. A plain
 * `SET … PX` would let a short hold (an earlier reset read by another process) cut a longer one short. The hold is kept
 * as a time to live, so processes whose clocks disagree still agree on when it ends; the value (its end, epoch ms) is
 * only for people reading Redis.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const EXTEND_HOLD_LUA = `
local ttl = tonumber(ARGV[1])
local current = redis.call("PTTL", KEYS[1])
if current < ttl then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ttl)
  return ttl
end
return current
`

/**
 * Ours: a slot taken for a request that starts now, if it is free (`MemoryStore.claimHold` on Redis). KEYS[1] is the
 * slot's hold; while it has a time to live, nothing changes and that time to live is returned (the slot is busy); else
 * it is set to ARGV[2] (the claim's mark: `inFlightMark`) for ARGV[1] ms (`Slots.inFlightFrom`: the request's timeout,
 * the window and the margin) and 0 returned. The time to live is what makes a crashed holder harmless: a process that
 * dies with its request in flight never ends the mark, and Redis drops it then.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const CLAIM_HOLD_LUA = `
local current = redis.call("PTTL", KEYS[1])
if current > 0 then
  return current
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[1])
return 0
`

/**
 * Ours: the request that took a slot with the mark ARGV[1] (`CLAIM_HOLD_LUA`) ended, and the slot is busy for ARGV[2]
 * ms more (`Slots.busyFrom`; 0 or less: free now), its hold's value then ARGV[3]. While the mark is still the claim's,
 * it is replaced, earlier or later; a mark that is another's (the claim's lapsed while its request was in flight, and
 * another request took the slot) is only ever lengthened, as `EXTEND_HOLD_LUA` does. KEYS[2] is the key's learned
 * limit's log: an entry it was started with for this claim while it was in flight (`LOG_SEED_LUA`, `seed:` and the
 * mark) is told the end too, and counts from the hold's new end less ARGV[4] (the limiter's window).
 *
 * @since 0.1.0
 * @category Scripts
 */
export const SETTLE_HOLD_LUA = `${redisNow}
local ttl = tonumber(ARGV[2])
local seed = "seed:" .. ARGV[1]
if redis.call("ZSCORE", KEYS[2], seed) then
  redis.call("ZADD", KEYS[2], "XX", now + ttl - tonumber(ARGV[4]), seed)
end
if redis.call("GET", KEYS[1]) == ARGV[1] then
  if ttl > 0 then
    redis.call("SET", KEYS[1], ARGV[3], "PX", ttl)
  else
    redis.call("DEL", KEYS[1])
  end
  return ttl
end
if ttl > 0 and redis.call("PTTL", KEYS[1]) < ttl then
  redis.call("SET", KEYS[1], ARGV[3], "PX", ttl)
end
return ttl
`

/**
 * The value of a slot's hold while its request is in flight (`CLAIM_HOLD_LUA`): the mark's end (epoch ms, for people
 * reading Redis) and a random token of the claim, so that the request's end (`SETTLE_HOLD_LUA`) knows the mark for
 * its own.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * const mark = RedisScripts.inFlightMark(1_700_000_060_600)
 * console.log(mark.startsWith("1700000060600:in-flight:"), mark.length) // => true 48
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const inFlightMark = (untilMillis: number): string => `${Math.ceil(untilMillis)}:in-flight:${logEntryName()}`

/**
 * Ours: the limit learned from the server (`ServerLimit.learn`), replaced only if it is still the one the decision was
 * made on (ARGV[1], "" for none), so that two processes judging a 429 each halve it once between them. ARGV[2] is the
 * new value ("" forgets it, and its log with it: KEYS[2]) and ARGV[3] its time to live.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const SET_LEARNED_LUA = `
local current = redis.call("GET", KEYS[1]) or ""
if current ~= ARGV[1] then
  return 0
end
if ARGV[2] == "" then
  redis.call("DEL", KEYS[1], KEYS[2])
else
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
end
return 1
`

/**
 * Ours: a place under the learned limit (`Slots.logWindows`). KEYS[1] is the log, a sorted set of the requests it
 * counts, each scored with its time (Redis's clock): ARGV[1] the limit, ARGV[2] the window, ARGV[3] the margin, ARGV[4]
 * how long entries are kept, ARGV[5] the new entry's name, ARGV[6] the request's timeout. Entries older than that are
 * removed; with fewer than the limit counted in the window, the entry is added, in flight (scored now, the timeout and
 * the margin: `Slots.logInFlightAt`, until `LOG_MARK_LUA` tells its end) and 0 returned, else the wait until there
 * would be room, taking nothing (the memory store's `logWait`'s answer).
 *
 * @since 0.1.0
 * @category Scripts
 */
export const LOG_ADMIT_LUA = `${redisNow}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])
local ahead = tonumber(ARGV[6]) + margin
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - keep)
local count = redis.call("ZCOUNT", KEYS[1], "(" .. (now - window), "+inf")
if count < limit then
  redis.call("ZADD", KEYS[1], now + ahead, ARGV[5])
  if redis.call("PTTL", KEYS[1]) < keep + ahead then redis.call("PEXPIRE", KEYS[1], keep + ahead) end
  return 0
end
local oldest = redis.call("ZRANGEBYSCORE", KEYS[1], "(" .. (now - window), "+inf", "WITHSCORES", "LIMIT", count - limit, 1)
return math.max(1, math.ceil(tonumber(oldest[2]) + window - now))
`

/**
 * Ours: a logged request counts from now (Redis's clock) and ARGV[3] milliseconds: if that is later than it did, when
 * it starts later than it was admitted (ARGV[3] its timeout and margin, `Slots.logInFlightAt`); or whatever it counted
 * from, when it ended (ARGV[4] "end", ARGV[3] the margin, `Slots.logEndedAt`). ARGV[1] is its entry, ARGV[2] how long
 * entries are kept. An entry given back or no longer kept stays so.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const LOG_MARK_LUA = `${redisNow}
local at = now + tonumber(ARGV[3])
local before = redis.call("ZSCORE", KEYS[1], ARGV[1])
if before and (ARGV[4] == "end" or tonumber(before) < at) then
  redis.call("ZADD", KEYS[1], "XX", at, ARGV[1])
  local ttl = tonumber(ARGV[2]) + tonumber(ARGV[3])
  if redis.call("PTTL", KEYS[1]) < ttl then redis.call("PEXPIRE", KEYS[1], ttl) end
end
return 0
`

/**
 * A new log entry's name: random, so that entries of processes sharing one log never meet.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * console.log(RedisScripts.logEntryName().length) // => 24
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const logEntryName = (): string => globalThis.crypto.randomUUID().replace(/-/g, "").slice(0, 24)

/**
 * Ours: how many requests the log counts (ARGV[1] the window).
 *
 * @since 0.1.0
 * @category Scripts
 */
export const LOG_COUNT_LUA = `${redisNow}
return redis.call("ZCOUNT", KEYS[1], "(" .. (now - tonumber(ARGV[1])), "+inf")
`

/**
 * Ours: a log started for a limit just learned, with the requests the limiter's slots already count (as
 * `MemoryStore.seedLogged` does): KEYS[1] is the log, then each slot's hold; ARGV[1] is the limiter's window. Each hold
 * with a time to live is an entry scored that far from now less the window (a mark ends a window and the margin after
 * its request's start or end; while the request is in flight, after its timeout). An in-flight mark's entry is named
 * `seed:` and the mark, so that its request's end (`SETTLE_HOLD_LUA`) tells it; another's, `seed:slot:${n}`. The log is
 * kept twice the window past its last entry.
 *
 * @since 0.1.0
 * @category Scripts
 */
export const LOG_SEED_LUA = `${redisNow}
local window = tonumber(ARGV[1])
local last = 0
for i = 2, #KEYS do
  local ttl = redis.call("PTTL", KEYS[i])
  if ttl > 0 then
    local mark = redis.call("GET", KEYS[i])
    local name = "seed:slot:" .. (i - 2)
    if mark and string.find(mark, ":in-flight:", 1, true) then name = "seed:" .. mark end
    redis.call("ZADD", KEYS[1], now + ttl - window, name)
    if ttl > last then last = ttl end
  end
end
local keep = last + 2 * window
if last > 0 and redis.call("PTTL", KEYS[1]) < keep then redis.call("PEXPIRE", KEYS[1], keep) end
return 0
`

/**
 * A learned limit as Redis keeps it,
 * `limit:windowMillis:sinceMillis:ttlMillis:from:sampleMillis:freshMillis:lowerMillis:refusedMillis:ceiling` (the last
 * five empty when absent); `""` for none.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * const learned = { limit: 20, windowMillis: 3_000, sinceMillis: 1_700_000_000_000, ttlMillis: 3_600_000, from: "header" as const, sampleMillis: 3_000 }
 * const text = RedisScripts.encodeLearned(learned)
 * console.log(text) // => 20:3000:1700000000000:3600000:header:3000::::
 * console.log(RedisScripts.decodeLearned(text)) // => { limit: 20, windowMillis: 3000, sinceMillis: 1700000000000, ttlMillis: 3600000, from: 'header', sampleMillis: 3000 }
 * console.log(RedisScripts.decodeLearned("garbage")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const encodeLearned = (learned: Learned | undefined): string =>
  learned === undefined ? "" : [
    learned.limit,
    learned.windowMillis,
    learned.sinceMillis,
    learned.ttlMillis,
    learned.from,
    ...optionalFields.map((field) => learned[field] ?? "")
  ].join(":")

const optionalFields = ["sampleMillis", "freshMillis", "lowerMillis", "refusedMillis", "ceiling"] as const

/**
 * The learned limit of a `…:learned` key as read (`null`: none), or `undefined` when it is not one.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * console.log(RedisScripts.decodeLearned("5:1000:0:100000:refusals:::::10"))
 * // => { limit: 5, windowMillis: 1000, sinceMillis: 0, ttlMillis: 100000, from: 'refusals', ceiling: 10 }
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const decodeLearned = (text: string | null): Learned | undefined => {
  const parts = text?.split(":")
  if (parts === undefined || parts.length !== 5 + optionalFields.length) return undefined
  const [limit, windowMillis, sinceMillis, ttlMillis] = parts.slice(0, 4).map(Number)
  const from = parts[4]
  if (
    ![limit, windowMillis, sinceMillis, ttlMillis].every(Number.isSafeInteger) || limit! < 1 || windowMillis! < 1 ||
    (from !== "header" && from !== "refusals")
  ) return undefined
  const learned: { -readonly [K in keyof Learned]: Learned[K] } = {
    limit: limit!,
    windowMillis: windowMillis!,
    sinceMillis: sinceMillis!,
    ttlMillis: ttlMillis!,
    from
  }
  for (const [i, field] of optionalFields.entries()) {
    const text = parts[5 + i]!
    if (text === "") continue
    const value = Number(text)
    if (!Number.isFinite(value)) return undefined
    learned[field] = value
  }
  return learned
}
