// Per edition: what the Effect 3 edition's shared tests (TEST_PAIRS in scripts/editions.ts) take from its own kit and platform.
/**
 * The shared tests of this package import from here what is named or placed differently in the two editions: the
 * in-memory ERP's package, the key-value store's module, the Schema of any record, the
 * platform's layer, a store's bytes, the TestClock and forking, the
 * HTTP client's modules, the SQL client's module (and the kernel's `NodeSqlite`, which a shared test's imports
 * cannot name in one order for both editions).
 */
import type { KeyValueStore as Store } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Option, Schema } from "effect"

export { TestClock } from "effect"

export { HttpClient, HttpClientResponse, KeyValueStore } from "@effect/platform"
export * as SqlClient from "@effect/sql/SqlClient"
export { NodeSqlite } from "@erp-client/kernel"
export { Fault, Sandbox, Seed } from "@erp-client/sandbox"

/** The platform's services on Node (file system, paths...). */
export const platformLayer = NodeContext.layer

/** The bytes a store holds under `key`, `undefined` when none (Effect 3's store answers an `Option`). */
export const storedBytes = (store: Store.KeyValueStore, key: string) =>
  Effect.map(store.getUint8Array(key), Option.getOrUndefined)

/** Any JSON object: `Schema.Record`'s Effect 3 form. */
export const AnyRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Runs `self` in a fiber of its own, supervised by the running one: Effect 3's `Effect.fork`. */
export const fork = Effect.fork
