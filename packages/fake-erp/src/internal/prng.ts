import type * as Seed from "../Seed.js"

/**
 * mulberry32 (see `Seed.mulberry32`).
 *
 * @internal
 */
export const mulberry32 = (seed: number): Seed.Prng => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A murmur3 finalizer over seed and index (see `Seed.derive`).
 *
 * @internal
 */
export const derive = (seed: number, index: number): number => {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul((index >>> 0) + 0x7f4a7c15, 0x85ebca6b)) >>> 0
  // The high bits of large indices (> 2^32) are folded in too, so every safe integer index gets its own stream.
  h = (h ^ Math.floor(index / 4294967296)) >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
