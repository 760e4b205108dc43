/**
 * The in-memory ERP without a transport or a runtime (see `ErpRules`): a request arrives (method, path and query, API
 * key) at a time the edition reads from its clock, the rate limit and the fault queue give their verdict, and the
 * answer comes out as a plan: a reply to carry out, or a wait before the next step. The edition sleeps the waits and
 * delivers the reply (the Effect 3 sandbox: `packages/sandbox/src/internal/core.ts`).
 *
 * All mutable state lives in the objects made here, and each step is one synchronous call, so each is atomic.
 */
import type * as ErpRules from "../ErpRules.js"
import * as Admission from "./admission.js"
import * as Answers from "./answers.js"
import * as ApiKeys from "./apiKeys.js"
import * as Drift from "./drift.js"
import * as Envelope from "./envelope.js"
import * as FaultQueue from "./faultQueue.js"
import * as Invoices from "./invoices.js"
import * as PartnerStore from "./partnerStore.js"
import * as Prng from "./prng.js"
import * as Replies from "./replies.js"
import * as RequestLog from "./requestLog.js"
import * as Resources from "./resources.js"
import * as Seeded from "./seed.js"
import * as Window from "./window.js"

/** @internal */
export const endpoints = ["/partner/list", "/partner/get", "/invoice/list", "/invoice/get"] as const

/** The endpoint of a request, one of `endpoints` or of `declared`; `undefined` for any other path or method. */
const endpointOf = (
  method: string,
  pathname: string,
  declared: ReadonlySet<string>
): ErpRules.Arrival["endpoint"] =>
  method === "GET" || method === "POST"
    ? endpoints.find((endpoint) => endpoint === pathname) ?? (declared.has(pathname) ? pathname : undefined)
    : undefined

const parseUrl = (url: string): URL | undefined => {
  try {
    return new URL(url, "http://sandbox.invalid")
  } catch {
    return undefined
  }
}

/** `base` plus a seeded random share of `jitter`, in milliseconds, for each answer. */
const makeLatency = <D>(
  options: ErpRules.Options<D>["latency"],
  seed: number,
  toMillis: (input: D) => number
): () => number => {
  const millis = (input: D | undefined): number => input === undefined ? 0 : toMillis(input)
  const base = millis(options?.base)
  const jitter = millis(options?.jitter)
  const prng = Prng.mulberry32(options?.seed ?? seed)
  return base === 0 && jitter === 0 ? () => 0 : () => base + prng() * jitter
}

/** @internal */
export const make = <D>(options: ErpRules.Options<D>, toMillis: (input: D) => number): ErpRules.Rules<D> => {
  const seed = options.seed ?? 1
  const given = typeof options.partners === "object" ? options.partners : undefined
  const partnerCount = given?.length ??
    Math.max(0, Math.floor(typeof options.partners === "number" ? options.partners : 1000))
  const maxListCount = Math.max(1, Math.floor(options.maxListCount ?? 500))
  const defaultListCount = options.defaultListCount === undefined
    ? undefined
    : Math.max(1, Math.floor(options.defaultListCount))
  const rateLimit = options.rateLimit === false ? false as const : Window.resolve(options.rateLimit, toMillis)
  // Odd records stray seeded partners only: partners given as records are served as given.
  const oddRecords = given === undefined ? options.oddRecords : undefined

  const initial = given === undefined
    ? PartnerStore.seeded(seed, partnerCount, oddRecords)
    : PartnerStore.given(given)
  const store = PartnerStore.fromInitial(seed, initial, options.hidden)
  const invoiceCount = Math.max(0, Math.floor(options.invoices ?? 100))
  const invoices = Invoices.make(seed, invoiceCount, partnerCount)
  const resources = Resources.make(options.resources, seed)
  const declared = new Set(
    resources.flatMap((table) => table.get === undefined ? [table.list] : [table.list, table.get])
  )
  const keys = ApiKeys.make(options.apiKeys ?? ["sandbox-key"])
  const faults = FaultQueue.make(options.randomFaults, seed, toMillis)
  for (const { fault, ...injectOptions } of options.inject ?? []) faults.push(fault, injectOptions)
  const log = RequestLog.make(Math.max(0, Math.floor(options.maxLogEntries ?? 10_000)))
  const admission = Admission.make(rateLimit, faults, log)
  const latency = makeLatency(options.latency, seed, toMillis)
  const messages = Envelope.resolveMessages(options.messages)
  const answer = Answers.make({
    store,
    invoices,
    resources,
    maxListCount,
    defaultListCount,
    messages,
    beforeList: Drift.make(options.drift, seed, store, log),
    ignoreOffset: options.ignoreOffset,
    ignoreConditions: options.ignoreConditions,
    maxListCountSchedule: options.maxListCountSchedule
  })
  const replies = Replies.make({
    rateLimit,
    messages,
    tooManyRequestsBody: options.tooManyRequestsBody ?? "envelope",
    toMillis
  })

  const failing = options.failingIds
  const failingSet = new Set((failing?.ids ?? []).map(String))
  const every = failing?.every === undefined ? 0 : Math.max(0, Math.floor(failing.every))
  const fails = (endpoint: string, params: URLSearchParams): boolean => {
    if (failing === undefined || endpoint !== "/partner/get") return false
    const id = params.get("id")
    if (id === null || !/^\d+$/.test(id)) return false
    return failingSet.has(String(Number(id))) || (every > 0 && Number(id) % every === 0)
  }

  const arrive = (incoming: ErpRules.Incoming, nowMillis: number): ErpRules.Arrival => {
    const url = parseUrl(incoming.url)
    const params = url === undefined ? new URLSearchParams() : url.searchParams
    const pathname = url === undefined ? incoming.url : url.pathname
    const endpoint = endpointOf(incoming.method, pathname, declared)
    const key = incoming.apiKey
    const draft = log.begin({
      method: incoming.method,
      endpoint: pathname,
      query: Array.from(params, ([name, value]) => [name, keys.redact(value, key)] as const),
      keyValid: keys.isValid(key),
      timeMillis: nowMillis
    })
    const verdict = endpoint === undefined ? undefined : admission.decide(endpoint, key, nowMillis)
    if (verdict?._tag === "Allowed" && verdict.fault !== undefined) log.faultServed(draft, verdict.fault._tag)
    const latencyMillis = endpoint === undefined ? 0 : latency()

    // A reply goes out: logged as sent before it does (a cut body has sent its status line).
    const sent = (reply: ErpRules.Reply): ErpRules.Reply => {
      draft.status = Replies.statusOf(reply)
      return reply
    }
    // The normal answer, computed when it is sent (after the waits): the answer of that time.
    const body = (endpoint: string) => {
      const answered = answer(endpoint, params, draft.keyValid)
      draft.records = answered.records
      draft.hidden = answered.hidden
      return answered.body
    }
    // Once the latency has passed.
    const decide = (endpoint: string, verdict: Admission.Verdict<D>): ErpRules.Plan => {
      if (verdict._tag === "Limited") return sent(replies.tooManyRequests(verdict.headers))
      const { fault, headers } = verdict
      if (fault === undefined && fails(endpoint, params)) {
        return sent(
          Replies.json(Envelope.failure(failing?.message ?? "Internal error"), failing?.status ?? 500, headers)
        )
      }
      if (fault === undefined) return sent(Replies.json(body(endpoint), 200, headers))
      const plan = replies.forFault({ fault, headers, nowMillis, answer: () => body(endpoint) })
      if (plan._tag !== "Delay") return sent(plan)
      return { _tag: "Delay", millis: plan.millis, next: () => sent(Replies.json(body(endpoint), 200, headers)) }
    }
    const plan = (): ErpRules.Plan => {
      if (verdict === undefined || endpoint === undefined) {
        return sent(Replies.json(Envelope.failure("Unknown endpoint"), 404, {}))
      }
      if (latencyMillis > 0) return { _tag: "Delay", millis: latencyMillis, next: () => decide(endpoint, verdict) }
      return decide(endpoint, verdict)
    }
    return {
      endpoint,
      nowMillis,
      plan,
      finish: (endedMillis) => log.finish(draft, endedMillis)
    }
  }

  const controls: ErpRules.Controls<D> = {
    apiKey: keys.first,
    seed,
    partnerCount,
    maxListCount,
    rateLimit,
    partnerAt: (index) => {
      if (given === undefined) return Seeded.servedPartnerAt(seed, index, oddRecords)
      if (!(Number.isInteger(index) && index >= 0 && index < partnerCount)) {
        throw new RangeError(`no partner was given at index ${index}`)
      }
      return initial.recordAt(index)
    },
    invoiceAt: (index) => {
      if (!(Number.isInteger(index) && index >= 0 && index < invoiceCount)) {
        throw new RangeError(`no invoice at index ${index}`)
      }
      return Invoices.invoiceAt(seed, index, partnerCount)
    },
    recordsOf: (list) => {
      const table = resources.find((table) => table.list === (list.startsWith("/") ? list : `/${list}`))
      if (table === undefined) throw new RangeError(`no resource is served at ${list}`)
      return Array.from({ length: table.count }, (_, index) => table.at(index))
    },
    oddKindAt: (index) => Seeded.oddKindAt(seed, index, oddRecords),
    hiddenAt: (index) => index >= 0 && index < partnerCount && Seeded.hiddenAt(seed, index, options.hidden),
    visiblePartners: () => store.visible(),
    inject: (fault, injectOptions) => faults.push(fault, injectOptions),
    clearFaults: faults.clear,
    stats: log.stats,
    requests: log.entries,
    resetStats: log.reset,
    resetRateLimits: admission.reset,
    revokeKey: (key) => keys.revoke(key),
    setKeys: (next) => keys.set(next),
    size: () => store.size(),
    partnerIds: () => store.ids(),
    insertPartners: (count, at) => {
      const ids = store.insert(at, Math.max(0, Math.floor(count)))
      log.countChanges(ids.length, 0)
      return ids
    },
    deletePartners: (ids) => {
      const removed = store.remove(ids)
      log.countChanges(0, removed)
      return removed
    },
    renamePartners: (ids) => store.rename(ids)
  }

  return { controls, arrive }
}
