/**
 * @since 0.1.0
 */
export * as BodyCap from "./BodyCap.js"

/**
 * @since 0.1.0
 */
export * as CallState from "./CallState.js"

/**
 * @since 0.1.0
 */
export * as Changes from "./Changes.js"

/**
 * @since 0.1.0
 */
export * as ConditionCheck from "./ConditionCheck.js"

/**
 * @since 0.1.0
 */
export * as DriftSafe from "./DriftSafe.js"

/**
 * @since 0.1.0
 */
export * as Envelope from "./Envelope.js"

/**
 * @since 0.1.0
 */
export * as Environment from "./Environment.js"

/**
 * @since 0.1.0
 */
export * as ErrorText from "./ErrorText.js"

/**
 * @since 0.1.0
 */
export * as FileRules from "./FileRules.js"

/**
 * @since 0.1.0
 */
export * as JsonScan from "./JsonScan.js"

/**
 * @since 0.1.0
 */
export * as JsonText from "./JsonText.js"

/**
 * @since 0.1.0
 */
export * as LimiterText from "./LimiterText.js"

/**
 * @since 0.1.0
 */
export * as ListCursor from "./ListCursor.js"

/**
 * @since 0.1.0
 */
export * as ListQuery from "./ListQuery.js"

/**
 * @since 0.1.0
 */
export * as MemoryStore from "./MemoryStore.js"

/**
 * @since 0.1.0
 */
export * as NodeSqlite from "./NodeSqlite.js"

/**
 * @since 0.1.0
 */
export * as Outage from "./Outage.js"

/**
 * @since 0.1.0
 */
export * as Page from "./Page.js"

/**
 * @since 0.1.0
 */
export * as Pager from "./Pager.js"

/**
 * @since 0.1.0
 */
export * as PagingText from "./PagingText.js"

/**
 * @since 0.1.0
 */
export * as Partner from "./Partner.js"

/**
 * @since 0.1.0
 */
export * as PlaceQueue from "./PlaceQueue.js"

/**
 * @since 0.1.0
 */
export * as RedisScripts from "./RedisScripts.js"

/**
 * @since 0.1.0
 */
export * as ResumeFile from "./ResumeFile.js"

/**
 * @since 0.1.0
 */
export * as RetryPolicy from "./RetryPolicy.js"

/**
 * @since 0.1.0
 */
export * as ServerLimit from "./ServerLimit.js"

/**
 * @since 0.1.0
 */
export * as Settings from "./Settings.js"

/**
 * @since 0.1.0
 */
export * as Slots from "./Slots.js"

/**
 * @since 0.1.0
 */
export * as SyncTable from "./SyncTable.js"

/**
 * @since 0.1.0
 */
export * as SyncTarget from "./SyncTarget.js"

/**
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"
