import { describe, expect, it } from "@effect/vitest"
import * as FileRules from "../src/FileRules.js"

describe("FileRules.isReadOnly", () => {
  it("is what access says, and for the owner and root, the owner's write bit", () => {
    const file = { mode: 0o100444, uid: 1000 }
    expect(FileRules.isReadOnly(file, { uid: 0, writable: true })).toBe(true)
    expect(FileRules.isReadOnly(file, { uid: 1000, writable: true })).toBe(true)
    expect(FileRules.isReadOnly(file, { uid: 1000, writable: false })).toBe(true)
    expect(FileRules.isReadOnly({ ...file, mode: 0o100644 }, { uid: 0, writable: true })).toBe(false)
    // Another user's file this user may write (a group's): access alone says.
    expect(FileRules.isReadOnly({ mode: 0o100464, uid: 1000 }, { uid: 1001, writable: true })).toBe(false)
    expect(FileRules.describeReadOnly(0o100400)).toBe("read-only for this user (mode 0400)")
  })
})

describe("FileRules.othersMayRename", () => {
  it("is true for a directory of another user, or one others may write without the sticky bit", () => {
    const me = { uid: 1000 }
    expect(FileRules.othersMayRename({ mode: 0o40755, uid: 1000 }, me)).toBe(false)
    expect(FileRules.othersMayRename({ mode: 0o40755, uid: 0 }, me)).toBe(false)
    expect(FileRules.othersMayRename({ mode: 0o40775, uid: 1000 }, me)).toBe(true)
    expect(FileRules.othersMayRename({ mode: 0o40777, uid: 0 }, me)).toBe(true)
    expect(FileRules.othersMayRename({ mode: 0o41777, uid: 0 }, me)).toBe(false)
    expect(FileRules.othersMayRename({ mode: 0o40755, uid: 1001 }, me)).toBe(true)
    // No owners (Windows): nothing to judge by.
    expect(FileRules.othersMayRename({ mode: 0o40755, uid: undefined }, { uid: undefined })).toBe(false)
  })
})
