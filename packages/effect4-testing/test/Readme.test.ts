import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"

const read = (name: string) => Fs.readFileSync(new URL(name, import.meta.url), "utf8")

describe("README.md", () => {
  it("its example is ReadmeExample.test.ts, which runs with the other tests (and in the consumer check)", () => {
    const example = /```ts\n([\s\S]*?)```/.exec(read("../README.md"))?.[1]
    expect(example).toBe(read("./ReadmeExample.test.ts"))
  })
})
