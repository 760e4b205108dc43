/**
 * The shared limiter's Redis scripts and values, which every process on the same Redis, prefix and key runs alike,
 * whichever edition it is: the fixed-window counter (the slots and the ticket), the holds that only grow (pauses, busy
 * slots), and the learned limit's compare-and-set. Keys: `${prefix}erp:${keyId}:${endpoint}:ticket`, `…:slot:${n}`,
 * `…:hold`, `…:slot:${n}:hold` and `…:limit` (docs/rate-limit.md, "Through Redis").
 *
 * @since 0.1.0
 */
import type { Learned } from "./ServerLimit.js"

/**
 * The fixed-window counter of `@effect/experimental/RateLimiter/Redis` (0.61), unchanged: it gives exactly the
 * memory store's semantics (count, and a PX time to live that grows by `refill * tokens` from the current one, so
 * `RateLimiter.consume` computes the same delay from it). That is all the slots and the ticket of `ErpRateLimiter`
 * need, and it is atomic, so the limit holds across processes with it as it is (docs/ARCHITECTURE.md, "Rate limit"). It is reproduced rather than
 * reached through `RedisStore.layerStore` only because that layer owns its connection in a way a failure policy
 * cannot live with: no "error" listener (ioredis then prints every failed reconnect to stderr), and a release by
 * `quit()`, which rejects when the connection is down and the offline queue is off (a defect at shutdown and a
 * reconnect loop that keeps the process alive); with the offline queue on, calls wait queued instead of failing fast.
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
 * Ours: the limit learned from the server (`serverLimit.ts`, `learn`), replaced only if it is still the one the
 * decision was made on (ARGV[1], "" for none), so that two processes judging a 429 each halve it once between them.
 * ARGV[2] is the new value ("" forgets it) and ARGV[3] its time to live.
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
  redis.call("DEL", KEYS[1])
else
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
end
return 1
`

/**
 * A learned limit as Redis keeps it, `limit:sinceMillis:ttlMillis` (for its time to live); `""` for none.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * const text = RedisScripts.encodeLearned({ limit: 10, sinceMillis: 1_700_000_000_000, ttlMillis: 3_600_000 })
 * console.log(text) // => 10:1700000000000:3600000
 * console.log(RedisScripts.decodeLearned(text)) // => { limit: 10, sinceMillis: 1700000000000, ttlMillis: 3600000 }
 * console.log(RedisScripts.decodeLearned("garbage")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const encodeLearned = (learned: Learned | undefined): string =>
  learned === undefined ? "" : `${learned.limit}:${learned.sinceMillis}:${learned.ttlMillis}`

/**
 * The learned limit of a `…:limit` key as read (`null`: none), or `undefined` when it is not one.
 *
 * @example
 * ```ts
 * import { RedisScripts } from "@erp-client/kernel"
 *
 * console.log(RedisScripts.decodeLearned("5:0:100000")) // => { limit: 5, sinceMillis: 0, ttlMillis: 100000 }
 * ```
 *
 * @since 0.1.0
 * @category Values
 */
export const decodeLearned = (text: string | null): Learned | undefined => {
  const parts = text?.split(":").map(Number)
  if (parts === undefined || parts.length !== 3 || !parts.every(Number.isSafeInteger) || parts[0]! < 1) return undefined
  return { limit: parts[0]!, sinceMillis: parts[1]!, ttlMillis: parts[2]! }
}
