/**
 * One writer per output: an export to `FILE` holds `FILE.lock` for its whole run, taken before it looks at or opens
 * anything of `FILE` (README.md, "Files, resume and restart"). The decisions (whose lock is it, does its holder still
 * run, is a file read-only) are plain functions over what was read; the effects read, create and remove the files.
 *
 * The lock is a small JSON file made with an exclusive create (`wx`: only one of two runs that try at once gets it),
 * naming its holder: pid, host, start, the command line (the value of --redis left out) and a random nonce. Written by
 * hand rather than an OS lock (`flock`, `fcntl`): Node has neither, and a file that names its holder lets a second run
 * say who holds it. What the platform's FileSystem does not cover is done by hand too: probing a pid
 * (`process.kill(pid, 0)`) and the host name.
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Os from "node:os"

/** What a lock file says of its holder. */
export const LockInfo = Schema.Struct({
  /** A pid of 0 or less would make `kill(pid, 0)` probe a process group: such a lock is unreadable. */
  pid: Schema.Int.pipe(Schema.positive()),
  host: Schema.String,
  /** When the run started, ISO 8601. */
  since: Schema.String,
  /** The command line, without secrets (see `commandLine`). */
  command: Schema.String,
  /** Hex only: it names a take-over's file (see `claim`). */
  nonce: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{16,64}$/)),
  /** Linux: the holder's start in clock ticks after boot (`/proc/<pid>/stat`, field 22), against pid reuse. */
  startTime: Schema.optional(Schema.String),
  /** Linux: `/proc/sys/kernel/random/boot_id`; another one means the machine restarted since. */
  bootId: Schema.optional(Schema.String),
  /** Linux: the holder's pid namespace (`/proc/self/ns/pid`): a container's pids are not this one's. */
  pidNamespace: Schema.optional(Schema.String)
})

export type LockInfo = typeof LockInfo.Type

const decodeLock = Schema.decodeUnknownEither(Schema.parseJson(LockInfo))
const encodeLock = Schema.encodeSync(Schema.parseJson(LockInfo))

/**
 * A lock file as read: a holder, or text that is not one (empty or cut short: a run between its create and its write,
 * or killed there; or not a lock at all). `identity` tells this lock from any later one at the same path: the nonce,
 * or the file's inode and modification time.
 */
export type Observed =
  | { readonly _tag: "Holder"; readonly info: LockInfo; readonly ageMillis: number; readonly identity: string }
  | { readonly _tag: "Unreadable"; readonly size: number; readonly ageMillis: number; readonly identity: string }

/** Where this run is: what a holder on the same host and in the same pid namespace is compared with. */
export interface Here {
  readonly host: string
  readonly bootId?: string | undefined
  readonly pidNamespace?: string | undefined
}

/** The holder's pid, probed here: alive (`kill(pid, 0)` did not say ESRCH), and its start time when /proc says. */
export interface Probe {
  readonly alive: boolean
  readonly startTime?: string | undefined
}

/**
 * Whether a lock is held: by a run that (as far as this host can tell) still runs or is still writing its lock; by a
 * run this host cannot check (another host, another pid namespace), which is never taken over; or stale.
 */
export type Verdict =
  | { readonly _tag: "Held"; readonly why: string }
  | { readonly _tag: "Unverifiable"; readonly why: string }
  | { readonly _tag: "Stale"; readonly why: string }

/** How long a lock file may be empty or cut short before it is taken for a creator that died between create and write. */
export const YOUNG_MILLIS = 5_000

/**
 * Judges a lock. `probe` is the holder's pid probed on this host, when the lock is readable and its host is this one.
 * A holder on another host is never judged stale: its pid means nothing here.
 */
export const judge = (observed: Observed, here: Here, probe: Probe | undefined): Verdict => {
  if (observed._tag === "Unreadable") {
    return observed.ageMillis < YOUNG_MILLIS
      ? { _tag: "Held", why: `its lock is being written (${observed.size} bytes so far)` }
      : {
        _tag: "Stale",
        why: `${observed.size === 0 ? "empty" : "not a lock"} for ${seconds(observed.ageMillis)}`
      }
  }
  const info = observed.info
  if (info.host !== here.host) return { _tag: "Unverifiable", why: "it runs on another host" }
  if (info.pidNamespace !== undefined && here.pidNamespace !== undefined && info.pidNamespace !== here.pidNamespace) {
    return { _tag: "Unverifiable", why: "it runs in another pid namespace (container) of this host" }
  }
  if (info.bootId !== undefined && here.bootId !== undefined && info.bootId !== here.bootId) {
    return { _tag: "Stale", why: "the machine has restarted since" }
  }
  if (probe === undefined) return { _tag: "Held", why: "it runs" }
  if (!probe.alive) return { _tag: "Stale", why: `pid ${info.pid} no longer runs` }
  if (info.startTime !== undefined && probe.startTime !== undefined && info.startTime !== probe.startTime) {
    return { _tag: "Stale", why: `pid ${info.pid} is now another process` }
  }
  return { _tag: "Held", why: "it runs" }
}

// `4.2 s`, `12 min`, `3 h 5 min`, `2 d 4 h`: how long, as a person reads it.
const seconds = (millis: number) => {
  const s = Math.max(0, millis) / 1000
  if (s < 60) return `${s.toFixed(1)} s`
  const minutes = Math.floor(s / 60)
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  return hours < 24 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`
}

/** Field 22 of `/proc/<pid>/stat` (the start time), counted after the command's name, which may hold `)` and spaces. */
export const startTimeFromStat = (stat: string): string | undefined => {
  const end = stat.lastIndexOf(")")
  if (end < 0) return undefined
  // Fields 3 onwards follow the name: field 22 is the 20th of them.
  const field = stat.slice(end + 1).trim().split(/\s+/)[19]
  return field !== undefined && /^\d+$/.test(field) ? field : undefined
}

// A word of a command line as a shell would take it back.
const word = (arg: string) => /^[\w.,:/@%+=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`

/**
 * The command line a lock records: `erp` and the arguments, with the value of `--redis` (a URL that may hold a
 * password) left out. The API key and other settings come from the environment and are never in it.
 */
export const commandLine = (args: ReadonlyArray<string>): string => {
  const words = ["erp"]
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--redis") {
      words.push(arg, "<redacted>")
      i++
    } else if (arg.startsWith("--redis=")) words.push("--redis=<redacted>")
    else words.push(word(arg))
  }
  return words.join(" ")
}

const MAX_COMMAND = 200

/** `pid 4242 on host build-7 since 2026-05-01T10:00:03Z (12.0 s ago), running erp partners list --output x` */
export const describeHolder = (info: LockInfo, nowMillis: number): string => {
  const started = Date.parse(info.since)
  const ago = Number.isNaN(started) ? "" : ` (${seconds(nowMillis - started)} ago)`
  const command = info.command.length > MAX_COMMAND ? `${info.command.slice(0, MAX_COMMAND - 1)}…` : info.command
  return `pid ${info.pid} on host ${info.host} since ${info.since}${ago}, running ${command}`
}

/**
 * Another run holds the lock of the output (or this host cannot tell that it does not): nothing was touched.
 */
export class OutputLocked extends Data.TaggedError("OutputLocked")<{
  readonly target: string
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }
}

/** The line for a lock this run does not take. */
export const describeRefusal = (
  target: string,
  lockPath: string,
  observed: Observed,
  verdict: Verdict,
  now: number
) => {
  if (observed._tag === "Unreadable") {
    return `${target} is being written by another run: ${verdict.why} in ${lockPath}; nothing was touched`
  }
  const holder = describeHolder(observed.info, now)
  return verdict._tag === "Unverifiable"
    ? `${target} is locked by a run that this host cannot check, as ${verdict.why} (${holder}); nothing was ` +
      `touched. If that run is over, remove ${lockPath} by hand`
    : `${target} is being written by another run (${holder}); nothing was touched`
}

/**
 * Whether an existing output must not be replaced: this user cannot write it (`access(W_OK)` failed), or it has no
 * write bit for its owner and this process is its owner or root. Root passes every access check, so the mode is
 * what says an operator made the file read-only on purpose; a file of another user that this user may write (a
 * group's) is judged by access alone.
 */
export const isReadOnly = (
  file: { readonly mode: number; readonly uid: number | undefined },
  me: { readonly uid: number | undefined; readonly writable: boolean }
): boolean =>
  !me.writable || ((me.uid === 0 || (me.uid !== undefined && me.uid === file.uid)) && (file.mode & 0o200) === 0)

/** The lock of an output, once held. */
export interface Lock {
  readonly path: string
  readonly nonce: string
  /** The stale lock this run took over: whose it was and why it was stale, for a note. */
  readonly tookOver: string | undefined
  /** Fails unless the lock file still names this run (it was removed or replaced by hand): `describeLost` says it. */
  readonly verify: Effect.Effect<void, Lost | PlatformError>
}

/** The lock no longer names this run; `now` is who it names, if anyone. */
export class Lost extends Data.TaggedError("Lost")<{ readonly lockPath: string; readonly now: string | undefined }> {}

/** `out.ndjson.lock no longer names this run (it now names pid 77 …)`, for the line of a run that stops for it. */
export const describeLost = (lost: Lost): string =>
  `${lost.lockPath} no longer names this run (${
    lost.now === undefined ? "it was removed" : `it now names ${lost.now}`
  }): another run may be writing the same output`

const isNotFound = (error: PlatformError) => error._tag === "SystemError" && error.reason === "NotFound"

const readProc = (fs: FileSystem.FileSystem, path: string) =>
  fs.readFileString(path).pipe(Effect.map((text) => text.trim()), Effect.option)

/** Where this run is, and what its lock says of it. */
const whoAmI = (fs: FileSystem.FileSystem) =>
  Effect.gen(function*() {
    const stat = yield* readProc(fs, "/proc/self/stat")
    const bootId = yield* readProc(fs, "/proc/sys/kernel/random/boot_id")
    const pidNamespace = yield* fs.readLink("/proc/self/ns/pid").pipe(Effect.option)
    const here: Here = {
      host: Os.hostname(),
      bootId: Option.getOrUndefined(bootId),
      pidNamespace: Option.getOrUndefined(pidNamespace)
    }
    return { here, startTime: Option.getOrUndefined(Option.flatMapNullable(stat, startTimeFromStat)) }
  })

const probe = (fs: FileSystem.FileSystem, pid: number): Effect.Effect<Probe> =>
  Effect.gen(function*() {
    const alive = yield* Effect.sync(() => {
      try {
        process.kill(pid, 0)
        return true
      } catch (error) {
        // ESRCH: no such process. EPERM: it runs, as another user.
        return (error as NodeJS.ErrnoException).code !== "ESRCH"
      }
    })
    if (!alive) return { alive }
    // Unreadable (not Linux, or /proc mounted with hidepid): no start time to compare, the pid alone says.
    const stat = yield* readProc(fs, `/proc/${pid}/stat`)
    return { alive, startTime: Option.getOrUndefined(Option.flatMapNullable(stat, startTimeFromStat)) }
  })

/**
 * The lock at `path` as it is now, or none. A file still empty or cut short is read again a few times first: its
 * creator writes it right after creating it, and a second run that waits a moment can name it.
 */
const observe = (fs: FileSystem.FileSystem, path: string): Effect.Effect<Option.Option<Observed>, PlatformError> =>
  Effect.gen(function*() {
    for (let attempt = 0;; attempt++) {
      const read = yield* Effect.all([fs.readFileString(path), fs.stat(path)]).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isNotFound, () => Effect.succeedNone)
      )
      if (Option.isNone(read)) return Option.none()
      const [text, info] = read.value
      const ageMillis = Date.now() - Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
      const decoded = decodeLock(text)
      if (Either.isRight(decoded)) {
        return Option.some<Observed>({ _tag: "Holder", info: decoded.right, ageMillis, identity: decoded.right.nonce })
      }
      if (attempt >= 10 || ageMillis >= YOUNG_MILLIS) {
        const inode = Option.getOrElse(info.ino, () => 0)
        const mtime = Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
        return Option.some<Observed>({
          _tag: "Unreadable",
          size: text.length,
          ageMillis,
          identity: `i${inode}-${mtime}`
        })
      }
      yield* Effect.sleep("50 millis")
    }
  })

/** Creates the lock file at `path` with `info` if there is none (exclusive create): whether it did. */
const create = (fs: FileSystem.FileSystem, path: string, info: LockInfo): Effect.Effect<boolean, PlatformError> =>
  Effect.scoped(
    fs.open(path, { flag: "wx", mode: 0o644 }).pipe(
      Effect.flatMap((file) =>
        file.writeAll(new TextEncoder().encode(`${encodeLock(info)}\n`)).pipe(
          Effect.as(true),
          // Not written whole (a full disk): a lock that names no one is not left behind.
          Effect.tapError(() => Effect.ignore(fs.remove(path)))
        )
      ),
      Effect.catchIf(
        (error) => error._tag === "SystemError" && error.reason === "AlreadyExists",
        () => Effect.succeed(false)
      )
    )
  )

/** Removes the lock at `path` if it still names `nonce` (never another run's). */
const release = (fs: FileSystem.FileSystem, path: string, nonce: string) =>
  fs.readFileString(path).pipe(
    Effect.flatMap((text) =>
      Either.match(decodeLock(text), {
        onLeft: () => Effect.void,
        onRight: (info) => info.nonce === nonce ? fs.remove(path) : Effect.void
      })
    ),
    Effect.ignore
  )

/** Puts a lock naming `info` at `path` in one step, replacing what is there (see `claim`: only a stale lock). */
const replace = (fs: FileSystem.FileSystem, path: string, info: LockInfo) => {
  const temporary = `${path}.${info.nonce}.new`
  return fs.writeFileString(temporary, `${encodeLock(info)}\n`, { flag: "wx", mode: 0o644 }).pipe(
    Effect.zipRight(fs.rename(temporary, path)),
    Effect.tapError(() => Effect.ignore(fs.remove(temporary)))
  )
}

// A take-over of a take-over's file is as deep as it goes: past it, two runs died taking over the same lock.
const MAX_DEPTH = 2

/**
 * Takes the lock at `path` for `mine`: creates it, or refuses for a live holder, or takes over a stale one.
 *
 * The take-over. A rename or a remove acts on whatever is at the path by then, not on the lock that was judged: two
 * runs that judged the same lock stale and each replaced it would both run (the second replacing the lock the first
 * had just made), and renaming the stale lock aside first moves a live lock as readily. So only one run at a time may
 * replace a given stale lock: the one that holds `path.takeover-<identity>` (taken by this same function, exclusive
 * create). Holding it, the run reads the lock again and, only if it is still the one judged stale (same nonce, or
 * same inode and time for a lock that names no one), renames its own lock over it: one step, so the path never lacks
 * a lock that another run could create meanwhile. Why that is safe: nothing but the holder of a lock's take-over file
 * replaces that lock (a creator's exclusive create fails while any lock is there), and a lock does not come back once
 * replaced (nonces are random), so a run that takes the take-over file late reads another lock, replaces nothing,
 * and judges that one. A take-over file left by a run killed while taking over is itself a stale lock, taken over
 * the same way one level down. After an exclusive create, the run reads its lock back: a creator that stalled
 * between its create and its write (an empty lock, judged stale after `YOUNG_MILLIS`) finds another's, and refuses.
 *
 * Succeeds with what was taken over, if anything.
 */
const claim = (
  fs: FileSystem.FileSystem,
  target: string,
  path: string,
  mine: LockInfo,
  here: Here,
  depth: number
): Effect.Effect<string | undefined, OutputLocked | PlatformError> =>
  Effect.gen(function*() {
    const refuse = (observed: Observed, verdict: Verdict) =>
      new OutputLocked({ target, reason: describeRefusal(target, path, observed, verdict, Date.now()) })
    // Each round ends with the lock taken, a refusal, or the lock changed under it (then it looks again).
    for (let round = 0; round < 5; round++) {
      if (yield* create(fs, path, mine)) {
        const now = yield* observe(fs, path)
        if (Option.isSome(now) && now.value.identity === mine.nonce) return undefined
        if (Option.isNone(now)) continue
        return yield* refuse(now.value, judge(now.value, here, undefined))
      }
      const observed = yield* observe(fs, path)
      if (Option.isNone(observed)) continue
      const held = observed.value
      const verdict = judge(
        held,
        here,
        held._tag === "Holder" && held.info.host === here.host ? yield* probe(fs, held.info.pid) : undefined
      )
      if (verdict._tag !== "Stale") return yield* refuse(held, verdict)
      const what = held._tag === "Holder"
        ? `${path}, left by ${describeHolder(held.info, Date.now())}: ${verdict.why}`
        : `${path}: ${verdict.why}`
      if (depth >= MAX_DEPTH) {
        return yield* new OutputLocked({
          target,
          reason: `${target}: its lock is stale (${what}), and runs taking it over died too; nothing was touched. ` +
            `Remove ${path} and the ${path}.takeover-* files beside it by hand`
        })
      }
      const takeover = `${path}.takeover-${held.identity}`
      const replaced = yield* Effect.acquireUseRelease(
        claim(fs, target, takeover, mine, here, depth + 1),
        () =>
          observe(fs, path).pipe(
            Effect.flatMap((again) =>
              Option.isSome(again) && again.value.identity === held.identity
                ? Effect.as(replace(fs, path, mine), true)
                : Effect.succeed(false)
            )
          ),
        () => release(fs, takeover, mine.nonce)
      )
      if (replaced) return what
    }
    return yield* new OutputLocked({
      target,
      reason: `${target}: its lock ${path} kept changing while this run tried to take it; nothing was touched`
    })
  })

/**
 * Holds `target.lock` for the scope: taken before anything of `target` is looked at, released (removed, if it still
 * names this run) when the scope closes, however it closes. Fails with `OutputLocked` for a lock another run holds,
 * one this host cannot check, or one it cannot take over.
 */
export const acquire = (
  target: string,
  options: { readonly command: string }
): Effect.Effect<Lock, OutputLocked | PlatformError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = `${target}.lock`
    const { here, startTime } = yield* whoAmI(fs)
    const nonce = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) =>
      b.toString(16).padStart(2, "0")).join("")
    const mine: LockInfo = {
      pid: process.pid,
      host: here.host,
      since: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      command: options.command,
      nonce,
      ...(startTime === undefined ? {} : { startTime }),
      ...(here.bootId === undefined ? {} : { bootId: here.bootId }),
      ...(here.pidNamespace === undefined ? {} : { pidNamespace: here.pidNamespace })
    }
    const tookOver = yield* Effect.acquireRelease(
      claim(fs, target, path, mine, here, 0),
      () =>
        release(fs, path, nonce)
    )
    const verify: Lock["verify"] = Effect.gen(function*() {
      const now = yield* observe(fs, path)
      if (Option.isSome(now) && now.value.identity === nonce) return
      return yield* new Lost({
        lockPath: path,
        now: Option.isSome(now) && now.value._tag === "Holder" ? describeHolder(now.value.info, Date.now()) : undefined
      })
    })
    return { path, nonce, tookOver, verify }
  })

/**
 * Why an existing `target` must not be replaced (see `isReadOnly`), or none: it does not exist, or may be written.
 */
export const readOnly = (target: string): Effect.Effect<Option.Option<string>, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(target).pipe(
      Effect.map(Option.some),
      Effect.catchIf(isNotFound, () => Effect.succeedNone)
    )
    if (Option.isNone(info)) return Option.none()
    const writable = yield* fs.access(target, { writable: true }).pipe(
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    )
    const file = { mode: info.value.mode, uid: Option.getOrUndefined(info.value.uid) }
    if (!isReadOnly(file, { uid: process.getuid?.(), writable })) return Option.none()
    return Option.some(`read-only for this user (mode ${(file.mode & 0o777).toString(8).padStart(4, "0")})`)
  })
