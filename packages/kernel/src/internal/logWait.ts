import type { LogWindows } from "../Slots.js"

/**
 * The wait before a log whose counted times are `times` admits one more under `windows`, at `nowMillis`: 0 when fewer
 * than `limit` still count (counted until a window after their time), else until enough of them have left. An entry of
 * a request in flight (`Slots.logInFlightAt`) may leave sooner, when its request ends: a waiter looks again at most a
 * learned window and its margin later (`lookAgainIn`).
 *
 * @example
 * ```ts
 * import { logWait } from "./logWait.js"
 *
 * const windows = { limit: 2, windowMillis: 1_000, marginMillis: 50 }
 * console.log(logWait([0, 400], windows, 500)) // => 500
 * console.log(logWait([0, 400], windows, 1_000), logWait([400], windows, 500)) // => 0 0
 * ```
 */
export const logWait = (
  times: ReadonlyArray<number>,
  windows: Pick<LogWindows, "limit" | "windowMillis">,
  nowMillis: number
): number => {
  const counting = times.filter((at) => at > nowMillis - windows.windowMillis).sort((a, b) => a - b)
  if (counting.length < windows.limit) return 0
  return Math.max(1, Math.ceil(counting[counting.length - windows.limit]! + windows.windowMillis - nowMillis))
}
