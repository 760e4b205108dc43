// Per edition: what the Effect 4 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own kit and platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * in-memory ERP (in the Effect 4 test kit), the key-value store's module, the Schema of any record.
 */
import { Schema } from "effect"

export { Sandbox } from "@erp-client/effect4-testing"
export * as Seed from "@erp-client/fake-erp/Seed"
export { KeyValueStore } from "effect/persistence"

/** Any JSON object: `Schema.Record`'s Effect 4 form. */
export const AnyRecord = Schema.Record(Schema.String, Schema.Unknown)
