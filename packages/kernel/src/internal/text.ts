/**
 * A wait as people read it: whole seconds as such (`3600 s`), else to a tenth (`1.5 s`).
 *
 * @example
 * ```ts
 * import * as Text from "./text.js"
 *
 * console.log(Text.seconds(3_600_000), Text.seconds(1_480)) // => 3600 s 1.5 s
 * ```
 */
export const seconds = (millis: number): string => {
  const tenths = Math.round(millis / 100)
  return `${tenths % 10 === 0 ? tenths / 10 : (tenths / 10).toFixed(1)} s`
}
