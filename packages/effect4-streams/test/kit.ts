// Per edition: what the Effect 4 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own kit and platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * in-memory ERP (in the Effect 4 test kit), the key-value store's module, the Schema of any record, the
 * platform's layer, a store's bytes, the TestClock and forking, the
 * HTTP client's modules, the SQL client's module (and the kernel's `NodeSqlite`, which a shared test's imports
 * cannot name in one order for both editions).
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Schema } from "effect"
import type { KeyValueStore as Store } from "effect/persistence"

export { Fault, Sandbox } from "@erp-client/effect4-testing"
export * as Seed from "@erp-client/fake-erp/Seed"
export { NodeSqlite } from "@erp-client/kernel"
export { HttpClient, HttpClientResponse } from "effect/http"
export { KeyValueStore } from "effect/persistence"
export * as SqlClient from "effect/sql/SqlClient"
export { TestClock } from "effect/testing"

/** The platform's services on Node (file system, paths...). */
export const platformLayer = NodeServices.layer

/** The bytes a store holds under `key`, `undefined` when none (Effect 4's store answers so itself). */
export const storedBytes = (store: Store.KeyValueStore, key: string) => store.getUint8Array(key)

/** Any JSON object: `Schema.Record`'s Effect 4 form. */
export const AnyRecord = Schema.Record(Schema.String, Schema.Unknown)

/** Runs `self` in a fiber of its own, supervised by the running one: Effect 4's `Effect.forkChild`. */
export const fork = Effect.forkChild
