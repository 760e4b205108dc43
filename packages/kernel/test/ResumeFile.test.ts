import { describe, expect, it } from "@effect/vitest"
import * as ResumeFile from "../src/ResumeFile.js"

// A resume file is believed only when its checksum matches its bytes and its header matches the run: a damaged one,
// or one made with other flags, against another server or endpoint, is refused naming what differs.

const flags = {
  command: "erp partners list",
  "--customers": false,
  "--where": ["city=Győr"],
  "--page-size": 20,
  "--format": "ndjson",
  "--spreadsheet": false,
  "--safe": true,
  "--strict": false
}

const content = {
  server: "http://127.0.0.1:40123/",
  endpoint: "partner/list",
  flags,
  next: { offset: 1700, pageSize: 20, served: 20, overlap: 2, tail: [3735928559, 12] },
  bytes: 1_523_456,
  records: 1700,
  pages: 85,
  columns: ["id", "company_name"],
  widths: [4, 30],
  idsBytes: 9_876,
  partCrc: "0badf00d",
  idsCrc: "deadbeef"
}

describe("ResumeFile.crc32", () => {
  it("is the CRC-32 zlib computes, and continues across appends", () => {
    const bytes = new TextEncoder().encode("The quick brown fox jumps over the lazy dog")
    expect(ResumeFile.crcText(ResumeFile.crc32(bytes))).toBe("414fa339")
    expect(ResumeFile.crc32(new Uint8Array())).toBe(0)
    for (const cut of [0, 1, 17, bytes.length]) {
      expect(ResumeFile.crc32(bytes.subarray(cut), ResumeFile.crc32(bytes.subarray(0, cut)))).toBe(
        ResumeFile.crc32(bytes)
      )
    }
  })
})

describe("ResumeFile.seal and unseal", () => {
  it("give back the content, header first in the text", () => {
    const text = ResumeFile.seal(content)
    expect(text.startsWith("{\"format\":\"erp-resume\",\"version\":3,")).toBe(true)
    expect(text).toMatch(/,"crc32":"[0-9a-f]{8}"\}\n$/)
    expect(ResumeFile.unseal(text)).toStrictEqual({ ok: true, content })
  })

  it("refuse every single-byte change of a file, at every position, to every other byte", () => {
    const bytes = new TextEncoder().encode(ResumeFile.seal(content))
    const decoder = new TextDecoder()
    let tried = 0
    const accepted: Array<string> = []
    for (let at = 0; at < bytes.length; at++) {
      for (let mask = 1; mask < 256; mask++) {
        const flipped = bytes.slice()
        flipped[at] = flipped[at]! ^ mask
        tried++
        if (ResumeFile.unseal(decoder.decode(flipped)).ok) accepted.push(`${at}^${mask}`)
      }
    }
    expect(tried).toBe(bytes.length * 255)
    expect(accepted).toStrictEqual([])
  })

  it("refuse a file cut short anywhere, one with bytes added, and one of another kind or version", () => {
    const text = ResumeFile.seal(content)
    for (let end = 0; end < text.length - 1; end++) expect(ResumeFile.unseal(text.slice(0, end)).ok).toBe(false)
    expect(ResumeFile.unseal(`${text.slice(0, 1)} ${text.slice(1)}`).ok).toBe(false)
    expect(ResumeFile.unseal(text.replace(/\n$/, "\n\n"))).toStrictEqual({
      ok: false,
      reason: "is not a resume file of erp, or is damaged (its checksum is missing)"
    })
    expect(ResumeFile.unseal(JSON.stringify({ version: 2, flags, bytes: 10, records: 1, pages: 1 }))).toStrictEqual({
      ok: false,
      reason: "was made by an earlier version of erp, without a checksum or the server it read from"
    })
    const reseal = (header: object) => {
      const body = JSON.stringify(header)
      return `${body.slice(0, -1)},"crc32":"${ResumeFile.crcText(ResumeFile.crc32(new TextEncoder().encode(body)))}"}`
    }
    expect(ResumeFile.unseal(reseal({ format: "erp-resume", version: 4, records: 1 }))).toStrictEqual({
      ok: false,
      reason: "was written by another version of erp (format version 4)"
    })
    expect(ResumeFile.unseal(reseal({ format: "other", version: 3 }))).toStrictEqual({
      ok: false,
      reason: "is not a resume file of erp"
    })
  })
})

describe("ResumeFile.serverOf", () => {
  it("is the scheme, host, port and path, never credentials, query or fragment", () => {
    expect(ResumeFile.serverOf("https://erp.example.com")).toBe("https://erp.example.com:443/")
    expect(ResumeFile.serverOf("https://erp.example.com:8443/api/v2")).toBe("https://erp.example.com:8443/api/v2/")
    expect(ResumeFile.serverOf("http://user:secret@127.0.0.1/?key=secret#x")).toBe("http://127.0.0.1:80/")
    expect(ResumeFile.serverOf("http://[::1]:9000/")).toBe("http://[::1]:9000/")
    expect(ResumeFile.serverOf("not a url")).toBeUndefined()
  })
})

describe("ResumeFile.headerDifference", () => {
  const saved: ResumeFile.Header = { server: "http://127.0.0.1:1/", endpoint: "partner/list", flags }

  it("names only what differs", () => {
    expect(ResumeFile.headerDifference(saved, saved)).toBeUndefined()
    expect(ResumeFile.headerDifference(saved, { ...saved, flags: { ...flags, "--page-size": 50 } })).toBe(
      "the saved export used --page-size 20, this run --page-size 50; use the same flags"
    )
    expect(ResumeFile.headerDifference(saved, { ...saved, flags: { ...flags, "--safe": false, "--where": [] } })).toBe(
      "the saved export used --where \"city=Győr\" and --safe, this run no --where and no --safe; use the same flags"
    )
    expect(ResumeFile.headerDifference(saved, { ...saved, server: "http://127.0.0.1:2/" })).toBe(
      "the saved export used ERP_BASE_URL=http://127.0.0.1:1/, this run ERP_BASE_URL=http://127.0.0.1:2/; use the " +
        "same server"
    )
    expect(ResumeFile.headerDifference(saved, { ...saved, endpoint: "partner/search" })).toBe(
      "the saved export used endpoint partner/list, this run endpoint partner/search; use the same endpoint"
    )
  })

  it("takes a flag off, empty or absent as one: another command's flags are not listed as differing", () => {
    const api: ResumeFile.Header = {
      server: saved.server,
      endpoint: "partner/list",
      flags: {
        command: "erp api list partner/list",
        "-p": [],
        "--where": ["city=Győr"],
        "--page-size": 20,
        "--format": "ndjson",
        "--spreadsheet": false,
        "--safe": true,
        "--id-field": "id"
      }
    }
    expect(ResumeFile.headerDifference(saved, api)).toBe(
      "the saved export used erp partners list and no --id-field, this run erp api list partner/list and " +
        "--id-field id; use the same command and flags"
    )
    expect(ResumeFile.headerDifference({ flags: { "--safe": false } }, { flags: {} })).toBeUndefined()
    expect(ResumeFile.headerDifference({ flags: { "-p": [] } }, { flags: { "-p": ["a=1"] } })).toBe(
      "the saved export used no -p, this run -p a=1; use the same flags"
    )
  })

  it("names server, endpoint and flags together when all differ", () => {
    expect(
      ResumeFile.headerDifference(saved, {
        server: "https://erp.example.com:443/",
        endpoint: "partner/search",
        flags: { ...flags, "--format": "csv" }
      })
    ).toBe(
      "the saved export used ERP_BASE_URL=http://127.0.0.1:1/ and endpoint partner/list and --format ndjson, this " +
        "run ERP_BASE_URL=https://erp.example.com:443/ and endpoint partner/search and --format csv; use the same " +
        "server and endpoint and flags"
    )
  })
})
