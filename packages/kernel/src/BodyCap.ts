/**
 * The cap on a response body (`maxBodyBytes`, docs/ARCHITECTURE.md, "The data path"): a body is never buffered past
 * it. A declared length over the cap is refused before reading; a declared length without compression frames the body,
 * which is read whole; otherwise (no length, or a compressed body, which decompresses into more) it is counted as it
 * arrives and cut off past the cap. Each edition's `internal/transport.ts` reads its platform's body with these.
 *
 * @since 0.1.0
 */

/**
 * How to read a body: refuse it, read it whole, or count it as it arrives.
 *
 * @since 0.1.0
 * @category Models
 */
export type Plan = "too-large" | "whole" | "counted"

/**
 * The plan for a body, from its response's headers (lower-case names).
 *
 * @example
 * ```ts
 * import { BodyCap } from "@erp-client/kernel"
 *
 * console.log(BodyCap.plan({ "content-length": "65536" }, 16_384), BodyCap.plan({ "content-length": "10" }, 16_384))
 * // => too-large whole
 * console.log(BodyCap.plan({ "content-length": "10", "content-encoding": "gzip" }, 16_384), BodyCap.plan({}, 16_384))
 * // => counted counted
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const plan = (headers: Readonly<Record<string, string | undefined>>, maxBytes: number): Plan => {
  const declared = Number(headers["content-length"] ?? Number.NaN)
  if (Number.isFinite(declared) && declared > maxBytes) return "too-large"
  const encoding = headers["content-encoding"]
  return Number.isFinite(declared) && (encoding === undefined || encoding === "identity") ? "whole" : "counted"
}

/**
 * A body counted as it arrives (mutable: one response's own).
 *
 * @since 0.1.0
 * @category Models
 */
export interface Counted {
  readonly maxBytes: number
  readonly chunks: Array<Uint8Array>
  size: number
}

/**
 * An empty count, capped at `maxBytes`.
 *
 * @example
 * ```ts
 * import { BodyCap } from "@erp-client/kernel"
 *
 * console.log(BodyCap.counted(16).size) // => 0
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const counted = (maxBytes: number): Counted => ({ maxBytes, chunks: [], size: 0 })

/**
 * Adds a chunk; `false` when the body goes past the cap (the reading stops: `ResponseTooLarge`).
 *
 * @example
 * ```ts
 * import { BodyCap } from "@erp-client/kernel"
 *
 * const body = BodyCap.counted(4)
 * console.log(BodyCap.add(body, new Uint8Array(3)), BodyCap.add(body, new Uint8Array(3))) // => true false
 * ```
 *
 * @since 0.1.0
 * @category Decisions
 */
export const add = (body: Counted, chunk: Uint8Array): boolean => {
  body.size += chunk.length
  if (body.size > body.maxBytes) return false
  body.chunks.push(chunk)
  return true
}

const textDecoder = new TextDecoder()

/**
 * The counted body as text (UTF-8).
 *
 * @example
 * ```ts
 * import { BodyCap } from "@erp-client/kernel"
 *
 * const body = BodyCap.counted(100)
 * BodyCap.add(body, new TextEncoder().encode("{\"result\":"))
 * BodyCap.add(body, new TextEncoder().encode("{}}"))
 * console.log(BodyCap.text(body)) // => {"result":{}}
 * ```
 *
 * @since 0.1.0
 * @category Accessors
 */
export const text = (body: Counted): string => {
  const bytes = new Uint8Array(body.size)
  let at = 0
  for (const chunk of body.chunks) {
    bytes.set(chunk, at)
    at += chunk.length
  }
  return textDecoder.decode(bytes)
}
