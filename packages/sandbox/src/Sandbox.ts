/**
 * A spec-faithful ERP API v2 server: seeded (or given) partners, auth, rate limits, faults. Served on a Node HTTP
 * server (`layer`), or to an `HttpClient` in memory, on Effect's clock (`layerHttpClient`), with the same behaviour.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as ErpRules from "@erp-client/fake-erp/ErpRules"
import type * as Seed from "@erp-client/fake-erp/Seed"
import type * as SlidingWindow from "@erp-client/fake-erp/SlidingWindow"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type * as Fault from "./Fault.js"
import * as Core from "./internal/core.js"
import * as Edition from "./internal/edition.js"
import { HttpClient, type HttpServer } from "./internal/edition.js"
import * as MemoryClient from "./internal/memoryClient.js"
import * as NodeServer from "./internal/nodeServer.js"

/**
 * The endpoints the sandbox serves; every other path is answered 404.
 *
 * @since 0.1.0
 * @category Constants
 */
export const endpoints: readonly ["/partner/list", "/partner/get", "/invoice/list", "/invoice/get"] = ErpRules.endpoints

/**
 * @since 0.1.0
 * @category Models
 */
export type Endpoint = typeof endpoints[number]

/**
 * A kind of record the sandbox serves besides partners and invoices (the `resources` option): its list and get
 * endpoints, its id field, and its records, given or made from a seed (`ErpRules.ResourceOptions` of
 * `@erp-client/fake-erp`), paged, filtered, rate limited and faulted as partners are.
 *
 * @since 0.1.0
 * @category Models
 */
export type ResourceOptions = ErpRules.ResourceOptions

/**
 * The sandbox's options: the in-memory ERP's (`ErpRules.Options` of `@erp-client/fake-erp`: the partners, invoices and
 * declared `resources`, paging, the rate limit, faults, drift, the request log), durations as Effect's (`"2 seconds"`,
 * `Duration.seconds(2)`, `2000`), and where to listen.
 *
 * @since 0.1.0
 * @category Models
 */
export interface Options extends ErpRules.Options<Edition.DurationInput> {
  /** Port to listen on; 0 (the default) lets the OS pick one. */
  readonly port?: number | undefined
  /** Address to listen on (default `"127.0.0.1"`). */
  readonly host?: string | undefined
}

/**
 * The `result.message` of the error envelopes. The contract shows `Unauthorized` and `Not found` and no message for a
 * 429 (docs/erp-api-v2.md, "Errors"); a real server may spell them otherwise.
 *
 * @since 0.1.0
 * @category Models
 */
export type Messages = ErpRules.Messages

/**
 * The body of a 429, which the contract does not show (docs/erp-api-v2.md, "Errors"):
 *
 * - `"envelope"`: the error envelope (`result.code` 0, `messages.tooManyRequests`, `data` null) as JSON;
 * - `"html"`: a small HTML page, as a proxy or gateway sends it;
 * - `"empty"`: no body at all.
 *
 * @since 0.1.0
 * @category Models
 */
export type TooManyRequestsBody = ErpRules.TooManyRequestsBody

/**
 * @since 0.1.0
 * @category Models
 */
export type InjectOptions = ErpRules.InjectOptions

/**
 * One request, as the sandbox saw it. The API key is never recorded: only whether it was valid.
 *
 * @since 0.1.0
 * @category Models
 */
export type RequestLogEntry = ErpRules.RequestLogEntry

/**
 * @since 0.1.0
 * @category Models
 */
export type Stats = ErpRules.Stats

/**
 * @since 0.1.0
 * @category Models
 */
export interface Service {
  /**
   * Where the sandbox answers, no trailing slash: `http://127.0.0.1:PORT` on a socket (`layer`), the origin the
   * in-memory HttpClient answers (`layerHttpClient`, default `https://sandbox.erp.invalid`).
   */
  readonly baseUrl: string
  /** The port of `baseUrl`. */
  readonly port: number
  /** The first valid API key at start. */
  readonly apiKey: string
  readonly seed: number
  /** How many partners the list started with, seeded or given (see `size` for now). */
  readonly partnerCount: number
  readonly maxListCount: number
  /** The rate limit in force, or `false`. */
  readonly rateLimit: SlidingWindow.Resolved | false
  /**
   * The seeded partner at `index` (zero-based), as list and get serve it (strayed when `oddRecords` says so): what the
   * list holds there until partners are inserted or deleted. With `partners` given as records, the record given at
   * `index` as served (its fields are the ones you gave, whatever the type says; a `RangeError` past the last).
   */
  readonly partnerAt: (index: number) => Seed.ServedRecord
  /** The seeded invoice at `index` (zero-based; its `id` is `index + 1`), as `invoice/list` and `invoice/get` serve it. */
  readonly invoiceAt: (index: number) => Seed.InvoiceRecord
  /**
   * The records a declared resource serves (`resources`, named by its list endpoint, `"product/list"`), in list
   * order; a `RangeError` for an endpoint that is not one of them.
   */
  readonly recordsOf: (list: string) => ReadonlyArray<Readonly<Record<string, unknown>>>
  /** How the seeded partner at `index` strays from the contract (`oddRecords`), or `None`. */
  readonly oddKindAt: (index: number) => Option.Option<Seed.OddKind>
  /** Whether the seeded partner at `index` is hidden (`hidden`): held in the list, never served. */
  readonly hiddenAt: (index: number) => boolean
  /**
   * Every partner the list serves now, in list order: the list without its hidden partners. What an export that loses
   * nothing writes (with `Seed.recordJson` of `@erp-client/fake-erp` for the text of each, exact numbers as written).
   */
  readonly visiblePartners: Effect.Effect<ReadonlyArray<Seed.ServedRecord>>
  /** Queues `fault` for the next `times` matching requests (after the rate limit let them through). */
  readonly inject: (fault: Fault.Fault, options?: InjectOptions) => Effect.Effect<void>
  readonly clearFaults: Effect.Effect<void>
  readonly stats: Effect.Effect<Stats>
  readonly requests: Effect.Effect<ReadonlyArray<RequestLogEntry>>
  /** Clears the counters and the request log (not the rate-limit windows). */
  readonly resetStats: Effect.Effect<void>
  readonly resetRateLimits: Effect.Effect<void>
  /** Makes `key` invalid from the next request on, e.g. a key revoked in the middle of an export. */
  readonly revokeKey: (key: string) => Effect.Effect<void>
  readonly setKeys: (keys: ReadonlyArray<string>) => Effect.Effect<void>
  /** How many partners the list holds now, hidden ones included (they hold list positions). */
  readonly size: Effect.Effect<number>
  /**
   * The ids of the partners, in list order, now, hidden ones included: each partner's own id (the seeded `index + 1`
   * or an inserted partner's), which `deletePartners` takes. An `id-beyond-double` or `duplicate-id` partner serves
   * another id (see `Seed.OddKind`).
   */
  readonly partnerIds: Effect.Effect<ReadonlyArray<number>>
  /** Inserts `count` new partners (fresh ids) before list position `at`; returns their ids. */
  readonly insertPartners: (count: number, at: number) => Effect.Effect<ReadonlyArray<number>>
  /** Deletes the partners with these ids; returns how many existed. */
  readonly deletePartners: (ids: Iterable<number>) => Effect.Effect<number>
  /** Renames the partners with these ids (` (renamed)` added to the company name); returns how many existed. */
  readonly renamePartners: (ids: Iterable<number>) => Effect.Effect<number>
}

/**
 * @since 0.1.0
 * @category Tags
 */
export class Sandbox extends Edition.Service<Sandbox, Service>()("@erp-client/sandbox/Sandbox") {}

/**
 * Builds the sandbox on an `HttpServer` already provided, serving until the scope closes.
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Sandbox } from "@erp-client/sandbox"
 * import { Layer } from "effect"
 * import { createServer } from "node:http"
 *
 * // On a Node server you configure yourself: here one that gives up on a request after 5 seconds
 * const SandboxLive = Layer.scoped(Sandbox.Sandbox, Sandbox.make({ partners: 200 })).pipe(
 *   Layer.provide(NodeHttpServer.layer(() => createServer({ requestTimeout: 5_000 }), { port: 0, host: "127.0.0.1" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const make = (options: Options = {}): Effect.Effect<Service, never, HttpServer.HttpServer | Scope.Scope> =>
  Effect.suspend(() => NodeServer.serve(Core.make(options)))

/**
 * The sandbox on its own Node HTTP server, listening on `host` (default 127.0.0.1) and `port` (default 0: the OS
 * picks one, read it from `baseUrl`). The server closes when the layer is released.
 *
 * @example
 * ```ts
 * import { Sandbox } from "@erp-client/sandbox"
 * import { Console, Effect } from "effect"
 *
 * // 2,500 partners at 10 requests per second, on a port the OS picks
 * const program = Effect.gen(function*() {
 *   const sandbox = yield* Sandbox.Sandbox
 *   yield* Console.log(`ERP_BASE_URL=${sandbox.baseUrl} ERP_API_KEY=${sandbox.apiKey}`)
 * }).pipe(Effect.provide(Sandbox.layer({ partners: 2500, rateLimit: { limit: 10, window: "1 second" } })))
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<Sandbox, Edition.ServeError> =>
  Edition.scopedLayer(Sandbox, make(options)).pipe(
    Layer.provide(
      NodeHttpServer.layer(() => Http.createServer(), {
        port: options.port ?? 0,
        host: options.host ?? "127.0.0.1"
      })
    )
  )

/**
 * Options of the in-memory sandbox: the sandbox's options (no port or host: nothing listens) and the origin it
 * answers.
 *
 * @since 0.1.0
 * @category Models
 */
export interface InMemoryOptions extends Omit<Options, "port" | "host"> {
  /**
   * The origin the HttpClient answers (default `https://sandbox.erp.invalid`, a name that never resolves, so a client
   * pointed at it by mistake reaches nothing real); a request to any other origin fails as a refused connection.
   */
  readonly baseUrl?: string | undefined
}

/**
 * The origin the in-memory sandbox answers by default.
 *
 * @since 0.1.0
 * @category Constants
 */
export const inMemoryBaseUrl = "https://sandbox.erp.invalid"

/**
 * The sandbox served to an `HttpClient` in memory, without a socket, until the scope closes. The same behaviour as on
 * a socket (`make`), every option included, with time on the Effect `Clock` of the fiber that sends the request: under
 * `TestClock` the rate-limit windows, `latency`, outages and `Delay` follow the test's clock. What a client sees:
 *
 * - a response, its body in memory;
 * - for `DropBeforeResponse`, a transport error (Effect 3's `RequestError` with reason `"Transport"`, Effect 4's
 *   `HttpClientError` whose reason is a `TransportError`);
 * - for `DropMidBody`, the response, whose body fails after its first bytes (reading it fails);
 * - for `Hang`, nothing until the caller gives up (it is interruptible) or the scope closes (then a transport error).
 *
 * A `TestClock` starts at 0 (1970): there an epoch `X-RateLimit-Reset` (the default unit) is a small number, which a
 * client may read as seconds from now; choose `rateLimit.resetUnit: "seconds"`, or set the clock to today first.
 *
 * @example
 * ```ts
 * import { Sandbox } from "@erp-client/sandbox"
 * import { Effect } from "effect"
 *
 * // A raw request to the sandbox in memory, the API key in its header
 * const program = Effect.gen(function*() {
 *   const { httpClient, sandbox } = yield* Sandbox.makeHttpClient({ partners: 10 })
 *   const response = yield* httpClient.get(`${sandbox.baseUrl}/partner/get?id=7`, {
 *     headers: { "X-API-KEY": sandbox.apiKey }
 *   })
 *   return response.status
 * }).pipe(Effect.scoped)
 *
 * Effect.runPromise(program).then(console.log) // => 200
 * ```
 *
 * @since 0.1.0
 * @category Constructors
 */
export const makeHttpClient = (
  options: InMemoryOptions = {}
): Effect.Effect<{ readonly sandbox: Service; readonly httpClient: HttpClient.HttpClient }, never, Scope.Scope> =>
  Effect.suspend(() => {
    const url = new URL(options.baseUrl ?? inMemoryBaseUrl)
    const core = Core.make(options)
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
    return Effect.map(MemoryClient.make(core, url.origin), (httpClient) => ({
      sandbox: { baseUrl: url.origin, port, ...core.controls },
      httpClient
    }))
  })

/**
 * The sandbox in memory, for tests: an `HttpClient` answered by it (no port is opened) and the `Sandbox` service to
 * steer and inspect it (`inject`, `requests`, `stats`). Point the client under test at `baseUrl` with `apiKey`. See
 * `makeHttpClient` for what a client sees.
 *
 * @example
 * ```ts
 * import { HttpClient } from "@effect/platform"
 * import { Sandbox } from "@erp-client/sandbox"
 * import { Effect } from "effect"
 *
 * // Code that takes an HttpClient, answered by the sandbox; then what the sandbox saw
 * const program = Effect.gen(function*() {
 *   const sandbox = yield* Sandbox.Sandbox
 *   const client = yield* HttpClient.HttpClient
 *   yield* client.get(`${sandbox.baseUrl}/partner/list?list_offset=0&list_count=25`, {
 *     headers: { "X-API-KEY": sandbox.apiKey }
 *   })
 *   const [entry] = yield* sandbox.requests
 *   return `${entry.endpoint} ${entry.status}, ${entry.records} records`
 * }).pipe(Effect.provide(Sandbox.layerHttpClient({ partners: 100 })))
 *
 * Effect.runPromise(program).then(console.log) // => /partner/list 200, 25 records
 * ```
 *
 * @since 0.1.0
 * @category Layers
 */
export const layerHttpClient = (options: InMemoryOptions = {}): Layer.Layer<HttpClient.HttpClient | Sandbox> =>
  Edition.scopedContext(
    Effect.map(
      makeHttpClient(options),
      ({ httpClient, sandbox }) => Context.make(Sandbox, sandbox).pipe(Context.add(HttpClient.HttpClient, httpClient))
    )
  )
