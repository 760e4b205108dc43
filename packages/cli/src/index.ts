/**
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"

/**
 * @since 0.1.0
 */
export * as Output from "./Output.js"

/**
 * @since 0.1.0
 */
export * as Progress from "./Progress.js"

/**
 * @since 0.1.0
 */
export * as Sink from "./Sink.js"

/**
 * @since 0.1.0
 */
export * as CliTest from "./CliTest.js"
