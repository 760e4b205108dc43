/**
 * `pnpm run docs` (its last step): the settings tables of docs/configuration.md, written from the code that reads the
 * settings, between the page's `<!-- generated: NAME … -->` and `<!-- end: NAME -->` lines; the rest of the page is
 * written by hand.
 *
 * - `settings`: every `ERP_*` variable, from the client's one list of them (`Environment.ts`, which `erp --help` names
 *   them from too), with its option and its default from the data the code fills defaults in from
 *   (`ErpConfig.defaults`, `ErpRateLimiter.defaults`, `ErpRateLimiterRedis.defaults`), and options without a variable.
 * - `otel`: every `OTEL_*` variable both editions' `ErpTelemetry` read (the otel packages' shared
 *   `internal/otelSettings.ts`), with the default its reading of an empty environment gives.
 *
 * What each setting means is said here, once per option. A variable or default added to the code without a meaning
 * here fails this script, and `--check` (run by `packages/client/test/docs-config.test.ts`) fails when the committed
 * page differs from what the code gives: run `pnpm run docs` (or `tsx scripts/docs-config.ts`) and commit the page.
 */
import { Environment, ErpConfig, ErpRateLimiter, ErpRateLimiterRedis } from "@erp-client/client"
import * as Duration from "effect/Duration"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Url from "node:url"
import * as OtelSettings from "../packages/otel/src/internal/otelSettings.js"

const root = Path.resolve(Path.dirname(Url.fileURLToPath(import.meta.url)), "..")
const page = Path.join(root, "docs", "configuration.md")
const check = process.argv.includes("--check")

type Module = "ErpConfig" | "ErpRateLimiter" | "ErpRateLimiterRedis"

// What each option means, by module and option. Defaults are not written here: they come from the code.
const meanings: Record<Module, Record<string, string>> = {
  ErpConfig: {
    baseUrl: "The ERP's URL, `https://…`; plain `http://` only to a loopback address. No credentials, query or " +
      "fragment.",
    apiKey:
      "The API key, sent as `X-API-KEY`; read as `Redacted` and never printed. Refused when empty, with control " +
      "characters or with spaces around it.",
    timeout: "How long one attempt may take, its whole body read included (`TimeoutError`).",
    retries: "Retries of a GET after a transient failure (a connection refused or reset, a timeout, HTTP 408, 500, " +
      "502, 503 or 504, a 2xx body that is not the envelope), at most; `0` turns them off. A POST is retried only " +
      "after a 429. An integer.",
    retryBudget: "How long after a call's start a retry may still begin; `Retry-After` is honoured within it.",
    retryBaseDelay: "The first wait between retries, doubled each time, jittered, at most 10 seconds a wait.",
    rateLimitBudget: "How long one call may wait in all for pauses the server asked for (429s, " +
      "`X-RateLimit-Remaining: 0`) before it fails with `RateLimited`.",
    maxServerWait: "The longest single wait for `X-RateLimit-Reset` believed; a reset further ahead (a wrong unit, " +
      "a hostile header) counts as unknown and the client backs off by its own schedule.",
    maxBodyBytes: "The largest response body accepted, in bytes; a larger one fails with `ResponseTooLarge` (and " +
      "halves the page when paging), never buffered. An integer.",
    retriesByStatus:
      "A lower cap of retries for some statuses, as data (`{ 502: 2 }` retries a 502 at most twice in a " +
      "call; its other transient failures still count against `retries`). Code or `Config` only.",
    headers:
      "Headers of the application's own on every request (`{ \"X-Tenant\": \"north\" }`); not the client's own " +
      "(`X-API-KEY`, `Content-Type`, `Accept`, trace headers). Code or `Config` only; values never logged."
  },
  ErpRateLimiter: {
    limit: "Request starts allowed per API key and endpoint in any interval of `window`. An integer.",
    window: "The server's window.",
    margin: "Added to the window between two uses of one slot, for network jitter between the client's clock and " +
      "the server's."
  },
  ErpRateLimiterRedis: {
    url: "Share the rate limit through this Redis: `redis://[[user]:password@]host[:port][/db]` or `rediss://…`; " +
      "never printed. `erp` uses Redis when this or `--redis URL` (which wins) is set, memory otherwise; in code, " +
      "`ErpRateLimiterRedis.layerConfig()` requires it.",
    prefix: "Prefix of every Redis key; processes share one budget when they use the same Redis, prefix and API key.",
    onFailure: "What a request does while Redis is unreachable or failing, past `ERP_REDIS_GRACE` (at once for a " +
      "Redis never reached): `fail` (fails with `RateLimiterUnavailable`, nothing sent) or `local` (each process " +
      "falls back to its own memory limiter, from a window after Redis stopped answering).",
    timeout: "Bound on connecting to Redis and on each Redis call.",
    grace: "How long requests wait for a Redis that has answered before and stops answering (a restart, a failover), " +
      "tried again once a second, before `ERP_REDIS_ON_FAILURE` applies; they go on through Redis as soon as it " +
      "answers, so nothing is sent uncounted. `0` applies the policy at once."
  }
}

const DEFAULTS: Record<Module, Readonly<Record<string, unknown>>> = {
  ErpConfig: ErpConfig.defaults,
  ErpRateLimiter: ErpRateLimiter.defaults,
  ErpRateLimiterRedis: ErpRateLimiterRedis.defaults
}

// The options without a default, which must be given: the two the client cannot go without, and the Redis URL of the
// Redis limiter.
const REQUIRED: Record<string, string> = {
  "ErpConfig.baseUrl": "required",
  "ErpConfig.apiKey": "required",
  "ErpRateLimiterRedis.url": "none (required by the Redis limiter)"
}

const MIB = 1024 * 1024

// A default as the page shows it, from the data the code fills it in from.
const shown = (option: string, value: unknown): string => {
  if (typeof value === "number") {
    return value >= MIB && value % MIB === 0 ? `\`${value}\` (${value / MIB} MiB)` : `\`${value}\``
  }
  if (typeof value === "string") {
    return Duration.decodeUnknown(value)._tag === "Some" ? value : `\`${value}\``
  }
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    // An option whose default is "none": an empty record (retriesByStatus, headers).
    if (Object.keys(record).length === 0) return "none"
    // A number of the limiter's windows (maxServerWait).
    if (typeof record.windows === "number") {
      const window = Duration.decode(ErpRateLimiter.defaults.window)
      const seconds = Duration.toSeconds(Duration.times(window, record.windows))
      return `${record.windows} windows of the limit (${seconds} seconds at the default window)`
    }
    // A share of the window, at least a duration (margin).
    if (typeof record.share === "number" && typeof record.atLeast === "string") {
      return `${record.share * 100}% of the window, at least ${record.atLeast}`
    }
  }
  throw new Error(`docs-config: ${option}: no way to show the default ${JSON.stringify(value)}`)
}

const cell = (text: string): string => text.replace(/\|/g, "\\|")

const settingsTable = (): string => {
  const rows: Array<string> = []
  const seen = new Set<string>()
  const row = (module: Module, option: string, variable: string | undefined) => {
    const key = `${module}.${option}`
    if (seen.has(key)) return
    seen.add(key)
    const meaning = meanings[module][option]
    if (meaning === undefined) {
      throw new Error(`docs-config: ${key} (${variable ?? "no variable"}) has no meaning in scripts/docs-config.ts`)
    }
    const value = DEFAULTS[module][option]
    const fallback = value !== undefined ? shown(key, value) : REQUIRED[key]
    if (fallback === undefined) throw new Error(`docs-config: ${key} has neither a default nor is it required`)
    const form = variable !== undefined && Environment.durations.includes(variable) ? " A duration." : ""
    rows.push(
      `| ${variable === undefined ? "(none)" : `\`${variable}\``} | \`${option}\` (${module}) | ${fallback} | ${
        cell(meaning + form)
      } |`
    )
  }
  // The variables in the order `erp --help` lists them (the two required ones first), then the options with a default
  // and no variable.
  const groups: ReadonlyArray<{ readonly module: Module; readonly variables: Readonly<Record<string, string>> }> = [
    { module: "ErpRateLimiter", variables: Environment.limiter },
    { module: "ErpConfig", variables: Environment.client },
    { module: "ErpRateLimiterRedis", variables: Environment.redis }
  ]
  row("ErpConfig", "baseUrl", Environment.client.baseUrl)
  row("ErpConfig", "apiKey", Environment.client.apiKey)
  for (const { module, variables } of groups) {
    for (const [option, variable] of Object.entries(variables)) row(module, option, variable)
  }
  for (const module of Object.keys(DEFAULTS) as Array<Module>) {
    for (const option of Object.keys(DEFAULTS[module])) row(module, option, undefined)
  }
  for (const module of Object.keys(meanings) as Array<Module>) {
    for (const option of Object.keys(meanings[module])) {
      if (!seen.has(`${module}.${option}`)) {
        throw new Error(`docs-config: ${module}.${option} has a meaning here but no variable or default in the code`)
      }
    }
  }
  return [
    "| variable | option (module) | default | meaning |",
    "| --- | --- | --- | --- |",
    ...rows
  ].join("\n")
}

// The OpenTelemetry settings: groups of variables (a signal's own variable beside the general one), the layer's
// option, the default the settings module gives an empty environment, and what it means.
const otelDefaults = OtelSettings.resolve({})
const perSignal = (general: string, part: string): ReadonlyArray<string> => [
  general,
  ...OtelSettings.SIGNALS.map((signal) => `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_${part}`)
]
const otelRows: ReadonlyArray<
  { readonly variables: ReadonlyArray<string>; readonly option: string; readonly fallback: string; meaning: string }
> = [
  {
    variables: ["OTEL_EXPORTER_OTLP_ENDPOINT"],
    option: "endpoint",
    fallback: `\`${OtelSettings.DEFAULT_ENDPOINT}\` (the layer); \`erp\` sends nothing unless an endpoint is set`,
    meaning: "The collector's base URL: each signal goes to `/v1/traces`, `/v1/metrics`, `/v1/logs` under it."
  },
  {
    variables: perSignal("OTEL_EXPORTER_OTLP_ENDPOINT", "ENDPOINT").slice(1),
    option: "",
    fallback: "the base URL with the signal's path",
    meaning: "One signal's URL, used as it is (for `erp`, setting one sends that signal only)."
  },
  {
    variables: perSignal("OTEL_EXPORTER_OTLP_PROTOCOL", "PROTOCOL"),
    option: "protocol",
    fallback: `\`${otelDefaults.traces?.protocol}\``,
    meaning: "`http/protobuf` or `http/json`; another (`grpc`) is said in a warning, and that signal is not sent."
  },
  {
    variables: perSignal("OTEL_EXPORTER_OTLP_HEADERS", "HEADERS"),
    option: "headers",
    fallback: "none",
    meaning: "`key=value,…`, values percent-encoded: a collector's token. A signal's own are added to the general ones."
  },
  {
    variables: perSignal("OTEL_EXPORTER_OTLP_TIMEOUT", "TIMEOUT"),
    option: "",
    fallback: `\`${otelDefaults.traces?.timeoutMillis}\` ms`,
    meaning: "Bound on one export, in milliseconds."
  },
  {
    variables: ["OTEL_SERVICE_NAME"],
    option: "serviceName",
    fallback: `\`${otelDefaults.serviceName}\` (the layer); \`erp\` for the command`,
    meaning: "The resource's `service.name`."
  },
  {
    variables: ["OTEL_RESOURCE_ATTRIBUTES"],
    option: "attributes, serviceVersion",
    fallback: "none",
    meaning: "More resource attributes, `key=value,…` (`deployment.environment.name=prod`); `service.name` and " +
      "`service.version` in it are read too."
  },
  {
    variables: ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"],
    option: "traces, metrics, logs",
    fallback: "`otlp`",
    meaning:
      "`none` turns that signal off; anything but `otlp` or `none` is said in a warning, and that signal is not sent."
  },
  {
    variables: ["OTEL_SDK_DISABLED"],
    option: "disabled",
    fallback: `\`${otelDefaults.disabled}\``,
    meaning: "`true` sends nothing."
  },
  {
    variables: ["OTEL_BSP_SCHEDULE_DELAY"],
    option: "",
    fallback: `\`${otelDefaults.traceIntervalMillis}\` ms`,
    meaning: "How often finished spans are sent, in milliseconds."
  },
  {
    variables: ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"],
    option: "",
    fallback: `\`${otelDefaults.traceBatchSize}\``,
    meaning: "The most spans sent in one export."
  },
  {
    variables: ["OTEL_METRIC_EXPORT_INTERVAL"],
    option: "",
    fallback: `\`${otelDefaults.metricIntervalMillis}\` ms`,
    meaning: "How often metrics are sent, in milliseconds."
  },
  {
    variables: ["OTEL_BLRP_SCHEDULE_DELAY"],
    option: "",
    fallback: `\`${otelDefaults.logIntervalMillis}\` ms`,
    meaning: "How often log records are sent, in milliseconds."
  }
]

const otelTable = (): string => {
  const listed = otelRows.flatMap((row) => row.variables)
  const read: ReadonlyArray<string> = OtelSettings.VARIABLES
  const unlisted = read.filter((variable) => !listed.includes(variable))
  const unknown = listed.filter((variable) => !read.includes(variable))
  if (unlisted.length > 0) throw new Error(`docs-config: OTEL variables read but not described: ${unlisted.join(", ")}`)
  if (unknown.length > 0) throw new Error(`docs-config: OTEL variables described but not read: ${unknown.join(", ")}`)
  return [
    "| variable | option of `ErpTelemetry.layer` | default | meaning |",
    "| --- | --- | --- | --- |",
    ...otelRows.map((row) =>
      `| ${row.variables.map((v) => `\`${v}\``).join(", ")} | ${
        row.option === "" ? "(none)" : row.option.split(", ").map((o) => `\`${o}\``).join(", ")
      } | ${row.fallback} | ${cell(row.meaning)} |`
    )
  ].join("\n")
}

const tables: Record<string, () => string> = { settings: settingsTable, otel: otelTable }

const text = Fs.readFileSync(page, "utf8")
let written = text
for (const [name, table] of Object.entries(tables)) {
  const start = new RegExp(`^<!-- generated: ${name} .*-->\\n`, "m").exec(written)
  const end = written.indexOf(`<!-- end: ${name} -->`)
  if (start === null || end === -1 || end < start.index) {
    throw new Error(`docs/configuration.md: no "<!-- generated: ${name} … -->" … "<!-- end: ${name} -->" lines`)
  }
  const from = start.index + start[0].length
  written = `${written.slice(0, from)}${table()}\n${written.slice(end)}`
}

if (check) {
  if (written !== text) {
    console.error(
      "docs/configuration.md: its settings tables differ from what the code gives; run `pnpm run docs` (or " +
        "`tsx scripts/docs-config.ts`) and commit the page"
    )
    process.exit(1)
  }
  console.log("docs/configuration.md: the settings tables are what the code gives")
} else if (written !== text) {
  Fs.writeFileSync(page, written)
  console.log("docs/configuration.md: settings tables written")
} else {
  console.log("docs/configuration.md: settings tables unchanged")
}
