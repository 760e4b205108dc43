import { Duration, Effect, Supervisor } from "effect"
import type { Exit, Fiber } from "effect"
import * as AsyncHooks from "node:async_hooks"

/** What is still open of what a run started: all zero (and `other` empty) when nothing is. */
export interface Open {
  /** TCP sockets (client and server ends), ref'd or not: undici unrefs its idle keep-alive sockets. */
  readonly sockets: number
  /** Listening TCP servers. */
  readonly servers: number
  /** Pending ref'd timers (`setTimeout`, `setInterval`) and immediates, as `duration ms callback` for the message. */
  readonly timers: ReadonlyArray<string>
  /** Any other type of active resource (`process.getActiveResourcesInfo()`) above its count at the start. */
  readonly other: Readonly<Record<string, number>>
}

// The worker's stdio and IPC pipes: process.stdout and process.stderr open theirs on the first output in the worker
// (the first test that logs) and keep them. What the trackers below see by identity is left out of the counts too.
const notCounted = new Set(["PipeWrap", "TTYWrap", "TCPSocketWrap", "TCPServerWrap", "Timeout", "Immediate"])

const activeCounts = (): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const type of process.getActiveResourcesInfo()) if (!notCounted.has(type)) out[type] = (out[type] ?? 0) + 1
  return out
}

interface Timer {
  readonly hasRef?: () => boolean
  readonly _destroyed?: boolean
  readonly _idleTimeout?: number
  readonly _onTimeout?: { readonly name?: string }
}

/**
 * Starts watching the sockets, servers and timers created from now on, by identity (an async hook sees each one
 * created and destroyed), plus the count of every other type of active resource. Counting by type alone
 * (`process.getActiveResourcesInfo()`) is not enough: a timer left behind is hidden by one that was pending at the
 * start and fired since (vitest's runner keeps a 100 ms one for its task updates), and an unref'd socket is not
 * listed at all. `open()` tells what is still open of it; `stop()` ends the watch.
 */
export const watch = () => {
  const live = new Map<number, { readonly type: string; readonly resource: unknown }>()
  const hook = AsyncHooks.createHook({
    init(asyncId, type, _trigger, resource) {
      if (type === "TCPWRAP" || type === "TCPSERVERWRAP" || type === "Timeout" || type === "Immediate") {
        live.set(asyncId, { type, resource })
      }
    },
    destroy(asyncId) {
      live.delete(asyncId)
    }
  }).enable()
  const before = activeCounts()
  const open = (): Open => {
    let sockets = 0
    let servers = 0
    const timers: Array<string> = []
    for (const { resource, type } of live.values()) {
      if (type === "TCPWRAP") sockets++
      else if (type === "TCPSERVERWRAP") servers++
      else {
        const timer = resource as Timer
        if (timer._destroyed !== true && timer.hasRef?.() !== false) {
          timers.push(`${type} ${timer._idleTimeout ?? 0} ms ${timer._onTimeout?.name || "anonymous"}`)
        }
      }
    }
    const other: Record<string, number> = {}
    for (const [type, n] of Object.entries(activeCounts())) {
      if (n > (before[type] ?? 0)) other[type] = n - (before[type] ?? 0)
    }
    return { sockets, servers, timers, other }
  }
  return { open, stop: () => void hook.disable() }
}

const isClosed = (open: Open) =>
  open.sockets === 0 && open.servers === 0 && open.timers.length === 0 && Object.keys(open.other).length === 0

/**
 * Polls (every 20 ms, for at most `within`) until nothing the watch saw created is still open, and returns what is
 * open then. Closing a socket or a server takes a turn or two of the event loop after its `close` call.
 */
export const closed = (
  watched: ReturnType<typeof watch>,
  within: Duration.DurationInput,
  alsoDone: Effect.Effect<boolean> = Effect.succeed(true)
): Effect.Effect<Open> =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.decode(within))
    let open = watched.open()
    while (!(isClosed(open) && (yield* alsoDone)) && Date.now() < deadline) {
      yield* Effect.sleep(Duration.millis(20))
      open = watched.open()
    }
    return open
  })

/** What a run left behind once it ended and released its layers: all zero when nothing was. */
export interface Leaks {
  /** Fibers forked during the run (by the test, the client or the sandbox's request handlers) still running. */
  readonly fibersLeft: number
  /** TCP sockets created during the run and still open. */
  readonly socketsLeft: number
  /** Ref'd timers and immediates created during the run and still pending. */
  readonly timersLeft: number
  /** For the failure message: the fibers left by id, and everything still open. */
  readonly detail: { readonly fibers: ReadonlyArray<string>; readonly open: Open }
}

const running = (fibers: ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>) =>
  fibers.filter((fiber) => fiber.unsafePoll() === null).map((fiber) => `#${fiber.id().id}`)

/**
 * Runs `run`, which must build and release its own sandbox and client (`Effect.provide(testLayer(...))` inside it),
 * watching what it starts: every fiber forked within it (a `Supervisor.track` passed down to children's children, and
 * to the sandbox's request handlers through the runtime its server captures) and every socket, server and timer
 * created meanwhile. Once it has ended, waits until none of those is still running or open, for at most `within`
 * (2 s by default), and returns its exit with what was left then.
 */
export const leakChecked = <A, E, R>(
  run: Effect.Effect<A, E, R>,
  options: { readonly within?: Duration.DurationInput } = {}
): Effect.Effect<readonly [Exit.Exit<A, E>, Leaks], never, R> =>
  Effect.acquireUseRelease(Effect.sync(watch), (watched) =>
    Effect.gen(function*() {
      const supervisor = yield* Supervisor.track
      const exit = yield* Effect.exit(Effect.supervised(run, supervisor))
      const fibersRunning = Effect.map(supervisor.value, running)
      const open = yield* closed(
        watched,
        options.within ?? "2 seconds",
        Effect.map(fibersRunning, (fibers) => fibers.length === 0)
      )
      const fibers = yield* fibersRunning
      const leaks: Leaks = {
        fibersLeft: fibers.length,
        socketsLeft: open.sockets,
        timersLeft: open.timers.length,
        detail: { fibers, open }
      }
      return [exit, leaks] as const
    }), (watched) => Effect.sync(watched.stop))
