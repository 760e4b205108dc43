/**
 * The resume file of an export to a file (`FILE.resume.json`, docs/cli.md, "Files, resume and restart"): its header
 * (format, version, the endpoint, the server, the flags), the checksums that make a damaged or foreign file refused
 * rather than believed, and the words for what differs between a saved export and the run that would continue it.
 *
 * The file is one JSON object whose last member is `"crc32"`: the CRC-32 of the file's own bytes up to that member
 * (with the object closed there). CRC-32 finds every error confined to 32 consecutive bits, so no single flipped byte
 * goes unseen, and other damage with odds of 1 in 2^32. It guards against damage, not against someone who writes the
 * file on purpose: anyone who may write the file may also write a matching checksum.
 *
 * @since 0.1.0
 */

/** What the first member of every resume file says. */
const FORMAT = "erp-resume"

/** The version of the layout this module writes and reads. Version 2 (no header, no checksum) is refused. */
const VERSION = 3

// Slicing-by-8: eight tables, eight bytes a step, for speed over one table a byte.
const TABLES = (() => {
  const tables = new Uint32Array(8 * 256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    tables[n] = c >>> 0
  }
  for (let n = 0; n < 256; n++) {
    for (let t = 1; t < 8; t++) {
      tables[t * 256 + n] = (tables[(t - 1) * 256 + n]! >>> 8) ^ tables[tables[(t - 1) * 256 + n]! & 0xff]!
    }
  }
  return tables
})()

/**
 * The CRC-32 (ISO-HDLC, as zlib and PNG compute it) of `bytes`, continuing from `previous`, the CRC of the bytes
 * before them: `crc32(b, crc32(a))` is the CRC of `a` then `b`, so a file's CRC can grow as it is appended to.
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * const bytes = new TextEncoder().encode("123456789")
 * console.log(ResumeFile.crc32(bytes).toString(16)) // => cbf43926
 * console.log(ResumeFile.crc32(bytes.subarray(4), ResumeFile.crc32(bytes.subarray(0, 4))).toString(16)) // => cbf43926
 * ```
 *
 * @since 0.1.0
 * @category Checksums
 */
export const crc32 = (bytes: Uint8Array, previous = 0): number => {
  const t = TABLES
  let crc = ~previous >>> 0
  let i = 0
  for (const end = bytes.length - 8; i <= end; i += 8) {
    const a = (crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))) >>> 0
    crc = t[7 * 256 + (a & 0xff)]! ^ t[6 * 256 + ((a >>> 8) & 0xff)]! ^ t[5 * 256 + ((a >>> 16) & 0xff)]! ^
      t[4 * 256 + (a >>> 24)]! ^ t[3 * 256 + bytes[i + 4]!]! ^ t[2 * 256 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^ t[bytes[i + 7]!]!
  }
  for (; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return ~crc >>> 0
}

/**
 * A CRC as the resume file writes it: 8 lowercase hex digits.
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * console.log(ResumeFile.crcText(0x1d)) // => 0000001d
 * ```
 *
 * @since 0.1.0
 * @category Checksums
 */
export const crcText = (crc: number): string => (crc >>> 0).toString(16).padStart(8, "0")

const encoder = new TextEncoder()
const SEAL = /,"crc32":"([0-9a-f]{8})"\}\n?$/

/**
 * The text of a resume file holding `content`: `format` and `version` first, the content's members, and the CRC of
 * what comes before it last.
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * console.log(ResumeFile.seal({ records: 2 }))
 * // => {"format":"erp-resume","version":3,"records":2,"crc32":"2168441c"} and a line break
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const seal = (content: object): string => {
  const { crc32: _crc, format: _format, version: _version, ...members } = content as Record<string, unknown>
  // `format` and `version` lead: a reader (or a person) sees what the file is before anything else.
  const body = JSON.stringify({ format: FORMAT, version: VERSION, ...members })
  return `${body.slice(0, -1)},"crc32":"${crcText(crc32(encoder.encode(body)))}"}\n`
}

/**
 * What `unseal` found: the content (without `format`, `version` and `crc32`), or why it is not a resume file this
 * version can trust.
 *
 * @since 0.1.0
 * @category Models
 */
export type Unsealed =
  | { readonly ok: true; readonly content: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Reads a resume file's text: its checksum must match its bytes, and its header must say this format and version.
 * The reason, when it does not, reads after the file's name (`out.ndjson.resume.json is damaged: …`).
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * const text = ResumeFile.seal({ records: 2 })
 * console.log(ResumeFile.unseal(text)) // => { ok: true, content: { records: 2 } }
 * console.log(ResumeFile.unseal(text.replace("2", "3")).ok) // => false
 * ```
 *
 * @since 0.1.0
 * @category Encoding
 */
export const unseal = (text: string): Unsealed => {
  const sealed = SEAL.exec(text)
  if (sealed === null) {
    const old = parse(text)
    return {
      ok: false,
      reason: isObject(old) && old.version === 2 && "flags" in old
        ? "was made by an earlier version of erp, without a checksum or the server it read from"
        : "is not a resume file of erp, or is damaged (its checksum is missing)"
    }
  }
  const body = `${text.slice(0, sealed.index)}}`
  if (crcText(crc32(encoder.encode(body))) !== sealed[1]) {
    return { ok: false, reason: "is damaged: its checksum does not match its content" }
  }
  const value = parse(body)
  if (!isObject(value) || value.format !== FORMAT) {
    return { ok: false, reason: "is not a resume file of erp" }
  }
  if (value.version !== VERSION) {
    return { ok: false, reason: `was written by another version of erp (format version ${String(value.version)})` }
  }
  const { format: _format, version: _version, ...content } = value
  return { ok: true, content }
}

/**
 * The server an export reads from, as its resume file records it: the base URL's scheme, host, port (the default
 * one written out) and path; never credentials, a query or a fragment (a base URL has none: `Settings.checkBaseUrl`),
 * and never the key, which is not in the URL. `undefined` for text that is not a URL.
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * console.log(ResumeFile.serverOf("https://erp.example.com/api")) // => https://erp.example.com:443/api/
 * console.log(ResumeFile.serverOf("http://user:pw@127.0.0.1:8080/?x=1")) // => http://127.0.0.1:8080/
 * ```
 *
 * @since 0.1.0
 * @category Header
 */
export const serverOf = (baseUrl: string): string | undefined => {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return undefined
  }
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : url.protocol === "http:" ? "80" : ""
  const path = url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`
  return `${url.protocol}//${url.hostname}${port === "" ? "" : `:${port}`}${path}`
}

/**
 * A flag's value: a switch, a number, a text, or a repeated flag's values.
 *
 * @since 0.1.0
 * @category Models
 */
export type FlagValue = string | number | boolean | ReadonlyArray<string>

const word = (value: string | number): string =>
  typeof value === "number" || /^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) ? String(value) : JSON.stringify(value)

/**
 * A flag as a person typed it: `--page-size 20`, `--safe`, `no --safe`, `--where a=1 --where b=2`, `no --where`;
 * `command` reads as itself. A flag that is off, empty or absent reads the same (`no --safe`): they mean the same.
 */
const describeFlag = (name: string, value: FlagValue | undefined): string => {
  if (name === "command") return typeof value === "string" ? value : "another command"
  if (value === undefined || value === false) return `no ${name}`
  if (value === true) return name
  if (typeof value === "object") {
    return value.length === 0
      ? `no ${name}`
      : value.map((v) => `${name} ${word(v)}`).join(" ")
  }
  return `${name} ${word(value)}`
}

/**
 * What a saved export was made with, or what a run would continue it with: where the records come from (the
 * server, the endpoint) and the flags that shape them.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Header {
  readonly server?: string | undefined
  readonly endpoint?: string | undefined
  readonly flags: Readonly<Record<string, FlagValue>>
}

// Two values differ when a person reading them would see a difference: off, empty and absent are one.
const differ = (name: string, a: FlagValue | undefined, b: FlagValue | undefined): boolean =>
  describeFlag(name, a) !== describeFlag(name, b)

/**
 * What differs between a saved export's header and this run's, as one clause (`the saved export used --page-size 20,
 * this run --page-size 50; use the same flags`), or `undefined` when nothing does. Only what really differs is named:
 * a flag off in one and absent in the other (another command's flags) is no difference. The endpoint is named only
 * when the commands agree (a command names its endpoint); the server reads as `ERP_BASE_URL=…`, which is where it
 * comes from.
 *
 * @example
 * ```ts
 * import { ResumeFile } from "@erp-client/kernel"
 *
 * const saved = { server: "http://127.0.0.1:8080/", flags: { command: "erp partners list", "--page-size": 20 } }
 * console.log(ResumeFile.headerDifference(saved, { ...saved, server: "http://127.0.0.1:8081/" }))
 * // => the saved export used ERP_BASE_URL=http://127.0.0.1:8080/, this run ERP_BASE_URL=http://127.0.0.1:8081/; use the same server
 * ```
 *
 * @since 0.1.0
 * @category Header
 */
export const headerDifference = (saved: Header, now: Header): string | undefined => {
  const before: Array<string> = []
  const after: Array<string> = []
  const same: Array<string> = []
  if (saved.server !== now.server) {
    before.push(saved.server === undefined ? "no server recorded" : `ERP_BASE_URL=${saved.server}`)
    after.push(now.server === undefined ? "no server recorded" : `ERP_BASE_URL=${now.server}`)
    same.push("server")
  }
  const names = [...Object.keys(now.flags), ...Object.keys(saved.flags).filter((name) => !(name in now.flags))]
  const flags = names.filter((name) => differ(name, saved.flags[name], now.flags[name]))
  if (saved.endpoint !== now.endpoint && !flags.includes("command")) {
    before.push(`endpoint ${saved.endpoint ?? "(none)"}`)
    after.push(`endpoint ${now.endpoint ?? "(none)"}`)
    same.push("endpoint")
  }
  for (const name of flags) {
    before.push(describeFlag(name, saved.flags[name]))
    after.push(describeFlag(name, now.flags[name]))
  }
  if (flags.length > 0) same.push(flags.includes("command") ? "command and flags" : "flags")
  if (before.length === 0) return undefined
  return `the saved export used ${before.join(" and ")}, this run ${after.join(" and ")}; use the same ` +
    same.join(" and ")
}
