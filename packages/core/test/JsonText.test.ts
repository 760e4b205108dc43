import { describe, expect, it } from "@effect/vitest"
import { JsonText } from "@erp-client/core"
import { Either, FastCheck as fc } from "effect"

/**
 * A generated JSON value as text: `text` as a server might write it (whitespace anywhere it may go, escapes chosen
 * at random), `compact` the same without whitespace outside strings: what the functions under test must give back.
 */
interface Json {
  readonly text: string
  readonly compact: string
  /** Whether some object in it repeats a key (`JSON.parse` keeps the last). */
  readonly repeats: boolean
}

const space = fc.constantFrom("", "", "", " ", "  ", "\n", "\n  ", "\t", "\r\n")

// Number tokens a float changes or keeps: big integers, trailing zeros, exponents, -0, tiny and plain numbers.
const numberToken = fc.oneof(
  fc.constantFrom("12345678901234567890", "9007199254740993", "1.10", "1e2", "-0", "-0.0", "0", "0.0000001", "1E+21"),
  fc.tuple(
    fc.boolean(),
    fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9]\d{0,24}$/)),
    fc.option(fc.stringMatching(/^\d{1,20}$/), { nil: undefined }),
    fc.option(
      fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.stringMatching(/^\d{1,3}$/)),
      { nil: undefined }
    )
  ).map(([negative, whole, fraction, exponent]) =>
    `${negative ? "-" : ""}${whole}${fraction === undefined ? "" : `.${fraction}`}${
      exponent === undefined ? "" : exponent.join("")
    }`
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n))
)

const hex4 = (code: number) => code.toString(16).padStart(4, "0")

// A string token: each code unit written raw where JSON allows, else escaped; sometimes escaped anyway (`\u00e9`,
// `\u0041`, `\/`, upper-case hex), as PHP's json_encode and others write them.
const stringToken = fc.array(
  fc.tuple(
    fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.constantFrom(0x22, 0x5c, 0x2f, 0x0a, 0x09, 0x00, 0x1f, 0xe9, 0x2028, 0xd83d, 0xde00),
      fc.integer({ min: 0, max: 0xffff })
    ),
    fc.constantFrom("raw", "raw", "raw", "u", "U", "short")
  ),
  { maxLength: 12 }
).map((units) => {
  let token = "\""
  let value = ""
  for (const [code, style] of units) {
    const char = String.fromCharCode(code)
    value += char
    const short = ({
      0x22: "\\\"",
      0x5c: "\\\\",
      0x2f: "\\/",
      0x08: "\\b",
      0x0c: "\\f",
      0x0a: "\\n",
      0x0d: "\\r",
      0x09: "\\t"
    } as Record<number, string>)[code]
    if (style === "short" && short !== undefined) token += short
    else if (style === "u" || code < 0x20 || code === 0x22 || code === 0x5c) token += `\\u${hex4(code)}`
    else if (style === "U") token += `\\u${hex4(code).toUpperCase()}`
    else token += char
  }
  return { token: `${token}"`, value }
})

// Keys from a small pool, so objects repeat keys and hold integer-like ones (which JSON.parse moves first).
const keyToken = fc.oneof(
  fc.constantFrom("id", "name", "0", "10", "2", "data", "a b", "é").map((k) => ({
    token: JSON.stringify(k),
    value: k
  })),
  stringToken
)

/** The failure's message, or "" when the text was read. */
const failure = <A>(read: Either.Either<A, JsonText.JsonTextError>): string =>
  Either.isLeft(read) ? read.left.message : ""

const leaf = (text: string): Json => ({ text, compact: text, repeats: false })

const { value: jsonValue } = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberToken.map(leaf),
    stringToken.map((s) => leaf(s.token)),
    fc.constantFrom("true", "false", "null").map(leaf),
    fc.array(fc.tuple(space, tie("value"), space), { maxLength: 4 }).chain((items) =>
      space.map((inner) => ({
        text: items.length === 0 ? `[${inner}]` : `[${items.map(([a, v, b]) => a + v.text + b).join(",")}]`,
        compact: `[${items.map(([, v]) => v.compact).join(",")}]`,
        repeats: items.some(([, v]) => v.repeats)
      }))
    ),
    fc.array(fc.tuple(space, keyToken, space, space, tie("value"), space), { maxLength: 5 }).chain((members) =>
      space.map((inner) => {
        const keys = members.map(([, key]) => key.value)
        return {
          text: members.length === 0
            ? `{${inner}}`
            : `{${members.map(([a, key, b, c, v, d]) => `${a}${key.token}${b}:${c}${v.text}${d}`).join(",")}}`,
          compact: `{${members.map(([, key, , , v]) => `${key.token}:${v.compact}`).join(",")}}`,
          repeats: new Set(keys).size < keys.length || members.some(([, , , , v]) => v.repeats)
        }
      })
    )
  )
}))

// A response body around records, with whitespace, maybe another top-level member after `data`.
const bodyOf = (records: ReadonlyArray<readonly [string, Json, string]>, gap: string, tail: string) =>
  `${gap}{${gap}"result"${gap}:${gap}{"code":1,"message":null},${gap}"data"${gap}:${gap}[${
    records.map(([a, r, b]) => a + r.text + b).join(",")
  }]${tail}}${gap}`

const body = fc.tuple(
  fc.array(fc.tuple(space, jsonValue, space), { maxLength: 6 }),
  space,
  fc.constantFrom("", ",\"more\":[1.50,{\"data\":2}]")
)

describe("JsonText.dataText", () => {
  it("gives each record of data exactly as written, compact, parsing to what JSON.parse gives", () => {
    fc.assert(
      fc.property(body, ([records, gap, tail]) => {
        const text = bodyOf(records, gap, tail)
        const read = JsonText.dataText(text)
        expect(Either.isRight(read)).toBe(true)
        const { data, elements } = Either.getOrThrow(read)
        // Every number token, key, repeated key and escape as written: only whitespace outside strings is gone.
        expect(elements).toEqual(records.map(([, r]) => r.compact))
        expect(data).toBe(`[${records.map(([, r]) => r.compact).join(",")}]`)
        // The values are those JSON.parse gives for the whole body, key order included.
        const parsed = JSON.parse(text).data as Array<unknown>
        expect(elements!.map((e) => JSON.parse(e))).toEqual(parsed)
        expect(elements!.map((e) => JSON.stringify(JSON.parse(e)))).toEqual(parsed.map((v) => JSON.stringify(v)))
      }),
      { numRuns: 500 }
    )
  })

  it("data that is not an array: its text; the last of repeated data keys, as JSON.parse takes", () => {
    fc.assert(
      fc.property(jsonValue, space, (value, gap) => {
        const text = `{"data":[1.0],${gap}"data"${gap}:${gap}${value.text}${gap}}`
        const { data, elements } = Either.getOrThrow(JsonText.dataText(text))
        expect(data).toBe(value.compact)
        expect(JSON.parse(data)).toEqual(JSON.parse(text).data)
        if (!value.compact.startsWith("[")) expect(elements).toBeUndefined()
      }),
      { numRuns: 300 }
    )
  })

  it("the specimens the README promises", () => {
    const text = `{"result": {"code": 1, "message": null},
      "data": [
        {"id": 12345678901234567890, "n": 9007199254740993, "p": 1.10, "e": 1e2, "z": -0.0, "2": "b", "1": "a",
         "s": "caf\\u00e9 \\/ \\"q\\" \\\\ \\n", "o": { "k" : [ 1.50 , true , null ] }}
      ]}`
    const { elements } = Either.getOrThrow(JsonText.dataText(text))
    expect(elements).toEqual([
      `{"id":12345678901234567890,"n":9007199254740993,"p":1.10,"e":1e2,"z":-0.0,"2":"b","1":"a",` +
      `"s":"caf\\u00e9 \\/ \\"q\\" \\\\ \\n","o":{"k":[1.50,true,null]}}`
    ])
  })

  it("a body without data, or not an object: a clear failure", () => {
    for (const text of ["{\"result\":{\"code\":1}}", "[]", "1", "", "{\"data\":1}x"]) {
      const read = JsonText.dataText(text)
      expect(Either.isLeft(read), text).toBe(true)
      expect(failure(read)).toMatch(/\(character \d+\)$/)
    }
  })
})

describe("JsonText.members", () => {
  it("each member's key decoded, its text as written, and its cell: a number's token, a string's value", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(space, keyToken, space, jsonValue), { maxLength: 6 }),
        (written) => {
          const text = `{${written.map(([a, key, b, v]) => `${a}${key.token}:${b}${v.text}${a}`).join(",")}}`
          const members = Either.getOrThrow(JsonText.members(text))
          expect(members.map((m) => m.key)).toEqual(written.map(([, key]) => key.value))
          expect(members.map((m) => m.json)).toEqual(written.map(([, , , v]) => v.compact))
          for (const member of members) {
            const value: unknown = JSON.parse(member.json)
            const cell = value === null
              ? null
              : typeof value === "string"
              ? value
              : member.json
            expect(member.cell).toBe(cell)
          }
        }
      ),
      { numRuns: 500 }
    )
  })

  it("not an object: a clear failure", () => {
    for (const text of ["[1]", "\"x\"", "{\"a\":1", "{\"a\" 1}", "{1:2}"]) {
      expect(Either.isLeft(JsonText.members(text)), text).toBe(true)
    }
  })
})

describe("JsonText.compact", () => {
  it("any value: as written, without whitespace outside strings", () => {
    fc.assert(
      fc.property(space, jsonValue, space, (a, value, b) => {
        expect(JsonText.compact(a + value.text + b)).toEqual(Either.right(value.compact))
      }),
      { numRuns: 500 }
    )
  })

  it("accepts exactly what JSON.parse accepts, for arbitrary and corrupted text", () => {
    const agrees = (text: string) => {
      let parses = true
      try {
        JSON.parse(text)
      } catch {
        parses = false
      }
      const read = JsonText.compact(text)
      expect(Either.isRight(read), text).toBe(parses)
      if (parses) expect(JSON.parse(Either.getOrThrow(read))).toEqual(JSON.parse(text))
    }
    fc.assert(fc.property(fc.string({ maxLength: 12 }), agrees), { numRuns: 2_000 })
    fc.assert(
      fc.property(
        jsonValue,
        fc.nat(),
        fc.constantFrom("", "x", ",", "]", "}", "\"", "\\", "0", "-", ".", "e", " ", "\u0001"),
        (value, at, junk) => {
          const cut = at % (value.text.length + 1)
          agrees(value.text.slice(0, cut))
          agrees(value.text.slice(0, cut) + junk + value.text.slice(cut))
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("hostile input ends in a value or a clear failure: deep nesting, truncation, long tokens", () => {
    const depth = 200_000
    expect(JsonText.compact("[".repeat(depth) + "]".repeat(depth))).toEqual(
      Either.right("[".repeat(depth) + "]".repeat(depth))
    )
    for (const text of ["[".repeat(depth), "{\"a\":".repeat(depth), `{"data":${"[".repeat(depth)}`]) {
      const read = JsonText.compact(text)
      expect(Either.isLeft(read)).toBe(true)
      expect(failure(read)).toMatch(/end of the text/)
      expect(Either.isLeft(JsonText.dataText(text))).toBe(true)
      expect(Either.isLeft(JsonText.members(text))).toBe(true)
    }
    const nested = "[".repeat(depth) + "]".repeat(depth)
    expect(JsonText.dataText(`{"result":{"code":1},"data":[${nested},{"a":1.10}]}`)).toEqual(
      Either.right({ data: `[${nested},{"a":1.10}]`, elements: [nested, `{"a":1.10}`] })
    )
    const digits = "1".repeat(1_000_000)
    expect(JsonText.compact(digits)).toEqual(Either.right(digits))
    expect(Either.isLeft(JsonText.compact(`"${"a".repeat(1_000_000)}`))).toBe(true)
  })
})

describe("JsonText.isPlain", () => {
  it("true only where JSON.stringify(JSON.parse(text)) writes the text back (repeated keys aside)", () => {
    let plain = 0
    fc.assert(
      fc.property(jsonValue, (value) => {
        if (!JsonText.isPlain(value.text)) return
        plain++
        if (!value.repeats) expect(JSON.stringify(JSON.parse(value.text))).toBe(value.compact)
      }),
      { numRuns: 2_000 }
    )
    // The check is not trivially false.
    expect(plain).toBeGreaterThan(100)
  })

  it("plain JSON as JSON.stringify writes it is plain; each number, key and escape a float round trip changes is not", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value)
        if (JsonText.isPlain(text)) expect(JSON.stringify(JSON.parse(text))).toBe(text)
      }),
      { numRuns: 1_000 }
    )
    expect(JsonText.isPlain(`{"id":1,"name":"Acme, Inc.","limit":32775.65,"tags":["a"],"at":"10:00:00.000Z"}`))
      .toBe(true)
    for (
      const text of [
        `{"id":12345678901234567890}`,
        `{"id":9007199254740993}`,
        `[1.10]`,
        `[1e2]`,
        `{"a": -0.0}`,
        `[-0]`,
        `[0.0000001]`,
        `{"a":1,"2":1}`,
        `["caf\\u00e9"]`,
        `["a\\/b"]`,
        `1.10`
      ]
    ) {
      expect(JsonText.isPlain(text), text).toBe(false)
      expect(JSON.stringify(JSON.parse(text))).not.toBe(Either.getOrThrow(JsonText.compact(text)))
    }
  })
})
