// Per edition: what the Effect 3 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own kit and platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * in-memory ERP's package, the key-value store's module, the Schema of any record.
 */
import { Schema } from "effect"

export { KeyValueStore } from "@effect/platform"
export { Sandbox, Seed } from "@erp-client/sandbox"

/** Any JSON object: `Schema.Record`'s Effect 3 form. */
export const AnyRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })
