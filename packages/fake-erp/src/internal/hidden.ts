import type * as Seed from "../Seed.js"
import * as Prng from "./prng.js"

// Hidden records are drawn from a stream of their own, so whether a partner is hidden is unrelated to its fields and
// to whether it strays.
const HIDDEN_STREAM = 0x41dde17

/**
 * Which seeded partners the server holds but does not serve (see `Seed.HiddenRecords`), as a predicate over the
 * index; `undefined` when none are.
 *
 * @internal
 */
export const make = (
  seed: number,
  options: Seed.HiddenRecords | undefined
): ((index: number) => boolean) | undefined => {
  if (options === undefined) return undefined
  if ("positions" in options) {
    const positions = new Set(options.positions)
    return positions.size === 0 ? undefined : (index) => positions.has(index)
  }
  const rate = options.rate
  if (!(rate > 0)) return undefined
  const base = Prng.derive(options.seed ?? seed, HIDDEN_STREAM)
  return (index) => Prng.mulberry32(Prng.derive(base, index))() < rate
}
