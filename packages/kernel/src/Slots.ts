/**
 * The rate limiter's slot arithmetic (docs/rate-limit.md): L slots per key, each a zero-burst spacer, dealt
 * round-robin by a ticket; a slot is busy while its request is in flight, then a window and a margin after it ended.
 * An edition's
 * limiter (`internal/slots.ts` of `@erp-client/client` and of `@erp-client/effect4-client`) runs its steps on a store
 * with these.
 *
 * @since 0.1.0
 */
import { defaultMarginMillis, defaults } from "./Settings.js"

/**
 * The slot a ticket (1, 2, 3, …) is dealt: round-robin over the `limit` slots of a key.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log([1, 2, 3, 4].map((ticket) => Slots.slotOf(ticket, 3))) // => [ 0, 1, 2, 0 ]
 * ```
 *
 * @since 0.1.0
 * @category Slots
 */
export const slotOf = (ticket: number, limit: number): number => (ticket - 1) % limit

/**
 * How long to wait for a hold (a slot's busy mark, or an endpoint's pause) that lasts until `until`: 0 when past.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.waitFor(1_500, 1_000), Slots.waitFor(900, 1_000)) // => 500 0
 * ```
 *
 * @since 0.1.0
 * @category Slots
 */
export const waitFor = (until: number, nowMillis: number): number => Math.max(0, until - nowMillis)

/**
 * Until when a slot is busy once its request ended: `slotWindowMillis` (the window and the margin) from its end, or
 * from its start while no end is told. The server saw the request between the two, so the slot's next request arrives
 * at least a window after it; the margin keeps the two apart when the answer came back at once (a server on the same
 * host, a clock of whole milliseconds), and costs a use of the slot at most the margin.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * const windows = { windowMillis: 30_000, slotWindowMillis: 30_100 }
 * // Ended at once: busy for the window and the margin from its start
 * console.log(Slots.busyFrom({ startedMillis: 0, endedMillis: 0 }, windows)) // => 30100
 * // Held up for two seconds: busy a window (and the margin) after it ended
 * console.log(Slots.busyFrom({ startedMillis: 0, endedMillis: 2_000 }, windows)) // => 32100
 * ```
 *
 * @since 0.1.0
 * @category Slots
 */
export const busyFrom = (
  request: { readonly startedMillis: number; readonly endedMillis?: number | undefined },
  windows: { readonly windowMillis: number; readonly slotWindowMillis: number }
): number => Math.max(request.startedMillis, request.endedMillis ?? request.startedMillis) + windows.slotWindowMillis

/**
 * Until when a slot is busy while its request is in flight: the request's timeout (the latest it can reach the server),
 * then `slotWindowMillis` (the window and the margin). The server counts a request when it arrives, which may be long
 * after it started (a slow connection, a busy event loop, a queue for a socket), so the slot is not given to the next
 * request while this one may still arrive. The request's end replaces this mark with `busyFrom`'s; the mark only
 * bounds how long a holder that never says it ended (its process died) keeps the slot. Without a timeout, the client's
 * default (`Settings.defaults.timeoutMillis`, 30 s).
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * const windows = { windowMillis: 30_000, slotWindowMillis: 30_600 }
 * // Held for its timeout and a window (and the margin) at most; its end sets the mark anew (busyFrom)
 * console.log(Slots.inFlightFrom({ startedMillis: 0, timeoutMillis: 10_000 }, windows)) // => 40600
 * console.log(Slots.inFlightFrom({ startedMillis: 0 }, windows)) // => 60600
 * ```
 *
 * @since 0.1.0
 * @category Slots
 */
export const inFlightFrom = (
  request: { readonly startedMillis: number; readonly timeoutMillis?: number | undefined },
  windows: { readonly slotWindowMillis: number }
): number => request.startedMillis + (request.timeoutMillis ?? defaults.timeoutMillis) + windows.slotWindowMillis

/**
 * How long a request waiting for a busy slot (or a full log) sleeps before it looks again: the wait, but at most
 * `slotWindowMillis`. A mark set by a request that ended lies at most that far ahead (`busyFrom`), so such a wait is
 * slept whole; a mark of a request still in flight (`inFlightFrom`) may be cut short by its end, which frees the slot a
 * window after it, so the waiter looks again then instead of sleeping to the mark's bound.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.lookAgainIn(500, 30_600), Slots.lookAgainIn(60_000, 30_600)) // => 500 30600
 * ```
 *
 * @since 0.1.0
 * @category Slots
 */
export const lookAgainIn = (waitMillis: number, slotWindowMillis: number): number =>
  Math.min(waitMillis, Math.max(1, slotWindowMillis))

/**
 * The store key of a key's ticket, the counter that deals requests to slots: `${key}:ticket`. Every process and
 * edition sharing a store reads and writes the same keys (docs/rate-limit.md, "Through Redis").
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.ticketKey("erp:0a1b:partner/list")) // => erp:0a1b:partner/list:ticket
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const ticketKey = (key: string): string => `${key}:ticket`

/**
 * The store key of a key's slot `n`: `${key}:slot:${n}` (its busy mark is the hold of this key).
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.slotKey("erp:0a1b:partner/list", 3)) // => erp:0a1b:partner/list:slot:3
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const slotKey = (key: string, slot: number): string => `${key}:slot:${slot}`

/**
 * The limiter's key of a request: `erp:${keyId}:${endpoint}`, where `keyId` is a digest of the API key (`keyIdOf`),
 * never the key.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.limiterKey("0a1b2c3d4e5f60718293a4b5", "partner/list")) // => erp:0a1b2c3d4e5f60718293a4b5:partner/list
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const limiterKey = (keyId: string, endpoint: string): string => `erp:${keyId}:${endpoint}`

/**
 * The endpoint of a limiter's key (`limiterKey`): what a log line may name. The key's digest of the API key is never
 * logged: anyone holding the logs could test a guessed key against it.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.endpointOfKey("erp:0a1b2c3d4e5f60718293a4b5:partner/list")) // => partner/list
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const endpointOfKey = (key: string): string => {
  const first = key.indexOf(":")
  const second = first < 0 ? -1 : key.indexOf(":", first + 1)
  return second < 0 ? key : key.slice(second + 1)
}

/**
 * The digest an API key is known by in the limiter's keys (and so in Redis): the first 12 bytes of its SHA-256, in hex.
 * Processes of either edition on one key compute the same.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * Slots.keyIdOf("sk-live-4f9a2c").then((id) => console.log(id.length)) // => 24
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const keyIdOf = async (apiKey: string): Promise<string> => {
  const bytes = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(apiKey))
  return Array.from(new Uint8Array(bytes).subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("")
}

/**
 * How a learned limit is kept: at most `limit` requests in any `windowMillis`. Each request is an entry in a log per key
 * (`MemoryStore`'s `admitLogged`, the Redis script `LOG_ADMIT_LUA`), beside the limiter's own slots, whose time counts
 * for a window after it: while the request is in flight, its timeout and a margin after its start (`logInFlightAt`: the
 * server counts a request when it arrives, which can be long after it started, so the entry counts all the while);
 * once it ended, the margin after its end (`logEndedAt`). The margin is 2% of the window, at least 50 ms. A learned
 * limit that changes applies at once to the requests already counted. The log keeps entries for `keepMillis` after
 * their time, twice the limiter's own window (or the learned one, if longer), so a learned window that grows still
 * counts what was sent before.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.logWindows({ limit: 20, windowMillis: 3_000 }, 30_000))
 * // => { limit: 20, windowMillis: 3000, marginMillis: 60, keepMillis: 60000 }
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const logWindows = (
  learned: { readonly limit: number; readonly windowMillis: number },
  configuredWindowMillis: number
): LogWindows => ({
  limit: learned.limit,
  windowMillis: learned.windowMillis,
  marginMillis: defaultMarginMillis(learned.windowMillis),
  keepMillis: Math.max(learned.windowMillis, 2 * configuredWindowMillis)
})

/**
 * The time of a log entry (see `logWindows`) while its request is in flight: its timeout (the latest it can reach the
 * server) and the margin after its start; the entry counts for a window after that. The request's end replaces it with
 * `logEndedAt`; this time only bounds how long a holder that never says it ended (its process died) counts. Without a
 * timeout, the client's default (`Settings.defaults.timeoutMillis`, 30 s).
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * const windows = { marginMillis: 50 }
 * console.log(Slots.logInFlightAt({ startedMillis: 0, timeoutMillis: 10_000 }, windows)) // => 10050
 * console.log(Slots.logInFlightAt({ startedMillis: 0 }, windows)) // => 30050
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const logInFlightAt = (
  request: { readonly startedMillis: number; readonly timeoutMillis?: number | undefined },
  windows: { readonly marginMillis: number }
): number => request.startedMillis + (request.timeoutMillis ?? defaults.timeoutMillis) + windows.marginMillis

/**
 * The time of a log entry (see `logWindows`) once its request ended: the margin after its end (or its start, if a clock
 * said otherwise); the entry counts for a window after that. The server saw the request before it ended, so the next
 * request the entry's place lets go arrives at least a window after it.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * const windows = { marginMillis: 50 }
 * console.log(Slots.logEndedAt({ startedMillis: 0, endedMillis: 4_000 }, windows)) // => 4050
 * ```
 *
 * @since 0.1.0
 * @category Learned limits
 */
export const logEndedAt = (
  request: { readonly startedMillis: number; readonly endedMillis: number },
  windows: { readonly marginMillis: number }
): number => Math.max(request.startedMillis, request.endedMillis) + windows.marginMillis

/**
 * A learned limit as its log keeps it (see `logWindows`).
 *
 * @since 0.1.0
 * @category Learned limits
 */
export interface LogWindows {
  readonly limit: number
  readonly windowMillis: number
  readonly marginMillis: number
  /** How long an entry is kept after its time (ms): at least the window. */
  readonly keepMillis: number
}

/**
 * The slot index of a slot key of `key` (`slotKey(key, n)`), or `undefined` for any other key.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.slotIndexOf("erp:k:partner/list", "erp:k:partner/list:slot:7")) // => 7
 * console.log(Slots.slotIndexOf("erp:k:partner/list", "erp:k:partner/list2:slot:7")) // => undefined
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const slotIndexOf = (key: string, storeKey: string): number | undefined => {
  const prefix = `${key}:slot:`
  if (!storeKey.startsWith(prefix)) return undefined
  const rest = storeKey.slice(prefix.length)
  return /^\d+$/.test(rest) ? Number(rest) : undefined
}

/**
 * The limiter's key a slot key belongs to (`slotKey(key, n)` gives `key` back); any other key is returned as it is.
 *
 * @example
 * ```ts
 * import { Slots } from "@erp-client/kernel"
 *
 * console.log(Slots.limiterKeyOfSlot("erp:k:partner/list:slot:7")) // => erp:k:partner/list
 * ```
 *
 * @since 0.1.0
 * @category Keys
 */
export const limiterKeyOfSlot = (storeKey: string): string => storeKey.replace(/:slot:\d+$/, "")
