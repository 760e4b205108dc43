/**
 * One writer per file: an export to `FILE` (and a `changes` run on its `STATE`) holds a lock on it for its whole run,
 * taken before it looks at or opens anything of the file (docs/cli.md, "Files, resume and restart"). The decisions
 * (whose lock is it, does its holder still run) are plain functions over what was read; the effects read, create and
 * remove the files.
 *
 * The lock belongs to the file, not to the name it was given by: the caller finds the file first (through symbolic
 * links, see `Files.followLinks`), and the lock is taken on that. It has two parts.
 *
 * - Where the platform has one (Linux), a lock the kernel releases when its holder dies (`kernelLock.ts`), one on the
 *   file's path and, when the file exists, one on its device and inode, so that a second name of the file (a hard
 *   link) meets the same lock. A run that holds them knows that no run of this host (and network namespace) holds
 *   the file: a lock file left by one that did is stale at once, however its holder died and whether or not its parent
 *   has reaped it.
 * - `FILE.lock`, a small JSON file made with an exclusive create (only one of two runs that try at once gets it),
 *   naming its holder: pid, host, start, the command line (the value of --redis left out) and a random nonce. It says
 *   who holds the file, and it is the lock where the kernel's is not shared: runs on other hosts (a shared file
 *   system), in other containers, and on platforms without the kernel's lock, where its holder is judged by its pid
 *   (gone, a zombie, or another process with its pid: stale).
 *
 * What the platform's FileSystem does not cover is done by hand: probing a pid (`process.kill(pid, 0)`), the host
 * name, and files opened without following links (`files.ts`).
 */
import * as FileRules from "@erp-client/kernel/FileRules"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { spawnSync } from "node:child_process"
import * as Crypto from "node:crypto"
import type * as Fs from "node:fs"
import * as FsP from "node:fs/promises"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as Files from "./files.js"
import * as KernelLock from "./kernelLock.js"

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
  pidNamespace: Schema.optional(Schema.String),
  /** Linux: the holder's network namespace (`/proc/self/ns/net`), where its kernel lock is seen. */
  netNamespace: Schema.optional(Schema.String),
  /** The holder also holds the kernel's lock of the file (see `kernelLock.ts`). */
  kernel: Schema.optional(Schema.Boolean)
})

export type LockInfo = typeof LockInfo.Type

const decodeLock = Schema.decodeUnknownEither(Schema.parseJson(LockInfo))
const encodeLock = Schema.encodeSync(Schema.parseJson(LockInfo))

/**
 * A lock file as read: a holder, or what is not one (empty or cut short: a run between its create and its write, or
 * killed there; not a lock at all; or a symbolic link, which no run makes). `identity` tells this lock from any later
 * one at the same path: the nonce, or the file's inode and modification time. `ageMillis` is how long ago the file
 * last changed, by its change time when its modification time is in the future (`touch -d` sets one, not the other).
 */
export type Observed =
  | { readonly _tag: "Holder"; readonly info: LockInfo; readonly ageMillis: number; readonly identity: string }
  | {
    readonly _tag: "Unreadable"
    readonly size: number
    readonly ageMillis: number
    readonly identity: string
    readonly link?: boolean | undefined
  }

/** Where this run is: what a holder on the same host and in the same pid namespace is compared with. */
export interface Here {
  readonly host: string
  readonly bootId?: string | undefined
  readonly pidNamespace?: string | undefined
  readonly netNamespace?: string | undefined
}

/**
 * The holder's pid, probed here: alive (`kill(pid, 0)` did not say ESRCH), a zombie (it has ended; its parent has not
 * reaped it yet, which `kill(pid, 0)` does not tell), and its start time when /proc says.
 */
export interface Probe {
  readonly alive: boolean
  readonly zombie?: boolean | undefined
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
 * `kernelHeld`: this run holds the kernel's lock of the file, so a holder of this host and network namespace that
 * held it too has ended. A holder on another host is never judged stale: its pid means nothing here.
 */
export const judge = (observed: Observed, here: Here, probe: Probe | undefined, kernelHeld = false): Verdict => {
  if (observed._tag === "Unreadable") {
    if (observed.link === true) return { _tag: "Stale", why: "a symbolic link, which no run makes" }
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
  if (
    kernelHeld && info.kernel === true && info.netNamespace !== undefined && info.netNamespace === here.netNamespace
  ) {
    return { _tag: "Stale", why: `pid ${info.pid} has ended (the kernel released its lock)` }
  }
  if (probe === undefined) return { _tag: "Held", why: "it runs" }
  if (!probe.alive) return { _tag: "Stale", why: `pid ${info.pid} no longer runs` }
  if (probe.zombie === true) return { _tag: "Stale", why: `pid ${info.pid} has ended (a zombie not yet reaped)` }
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

/**
 * Whether field 3 of `/proc/<pid>/stat` (the state) says the process has ended: `Z` (a zombie: exited, its parent has
 * not reaped it) or `X` (dead, being removed).
 */
export const endedFromStat = (stat: string): boolean => {
  const end = stat.lastIndexOf(")")
  const state = end < 0 ? undefined : stat.slice(end + 1).trim()[0]
  return state === "Z" || state === "X"
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

/** See `FileRules.isReadOnly`: the rule for an output, and for a state. */
export const isReadOnly = FileRules.isReadOnly

/** The lock of an output, once held. */
export interface Lock {
  readonly path: string
  readonly nonce: string
  /** The stale lock this run took over: whose it was and why it was stale, for a note. */
  readonly tookOver: string | undefined
  /** Fails unless the lock file still names this run (it was removed or replaced by hand): `describeLost` says it. */
  readonly verify: Effect.Effect<void, Lost | Files.FileError>
}

/** The lock no longer names this run; `now` is who it names, if anyone. */
export class Lost extends Data.TaggedError("Lost")<{ readonly lockPath: string; readonly now: string | undefined }> {}

/** `out.ndjson.lock no longer names this run (it now names pid 77 …)`, for the line of a run that stops for it. */
export const describeLost = (lost: Lost): string =>
  `${lost.lockPath} no longer names this run (${
    lost.now === undefined ? "it was removed" : `it now names ${lost.now}`
  }): another run may be writing the same output`

/** The line for a file whose kernel lock another run holds: named by what it answered, when it did. */
export const describeBusy = (target: string, holder: LockInfo | undefined, now: number): string =>
  `${target} is being written by another run (${
    holder === undefined ? "one that did not say who it is" : describeHolder(holder, now)
  }); nothing was touched`

const readProc = (path: string) =>
  Files.readText(path).pipe(Effect.map(Option.map((text) => text.trim())), Effect.orElseSucceed(Option.none))

const readLink = (path: string) => Effect.option(Effect.tryPromise(() => FsP.readlink(path)))

/** Where this run is, and what its lock says of it. */
const whoAmI = Effect.gen(function*() {
  const stat = yield* readProc("/proc/self/stat")
  const bootId = yield* readProc("/proc/sys/kernel/random/boot_id")
  const pidNamespace = yield* readLink("/proc/self/ns/pid")
  const netNamespace = yield* readLink("/proc/self/ns/net")
  const here: Here = {
    host: Os.hostname(),
    bootId: Option.getOrUndefined(bootId),
    pidNamespace: Option.getOrUndefined(pidNamespace),
    netNamespace: Option.getOrUndefined(netNamespace)
  }
  return { here, startTime: Option.getOrUndefined(Option.flatMapNullable(stat, startTimeFromStat)) }
})

/** Without /proc (macOS, BSD): whether `ps` says the process is a zombie (its state starts with Z). */
const zombieByPs = (pid: number): boolean => {
  try {
    const ps = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8", timeout: 2_000 })
    return ps.status === 0 && ps.stdout.trim().startsWith("Z")
  } catch {
    return false
  }
}

const probe = (pid: number): Effect.Effect<Probe> =>
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
    // Unreadable (not Linux, or /proc mounted with hidepid): no start time to compare, the pid alone says, and `ps`
    // whether it is a zombie.
    const stat = yield* readProc(`/proc/${pid}/stat`)
    if (Option.isNone(stat)) return { alive, zombie: process.platform !== "win32" && zombieByPs(pid) }
    return { alive, zombie: endedFromStat(stat.value), startTime: startTimeFromStat(stat.value) }
  })

// How long ago a lock file last changed: by its modification time, or by its change time when the modification time
// is in the future (set by hand, or by another host's clock), which the change time cannot be (utimes sets it to now).
const ageOf = (info: Fs.Stats, now: number) => {
  const modified = now - info.mtimeMs
  return modified >= 0 ? modified : Math.max(0, now - info.ctimeMs)
}

/** The lock file at `path` as it is now, never read through a link: its text and what fstat says of it. */
const readLock = (path: string) =>
  Effect.scoped(Effect.gen(function*() {
    const handle = yield* Files.openExisting(path, "r")
    const info = yield* handle.stat
    const bytes = new Uint8Array(Math.min(info.size, 65_536))
    const read = yield* handle.read(bytes, 0)
    return { text: new TextDecoder().decode(bytes.subarray(0, read)), info }
  }))

/**
 * The lock at `path` as it is now, or none. A file still empty or cut short is read again a few times first: its
 * creator writes it right after creating it, and a second run that waits a moment can name it.
 */
const observe = (path: string): Effect.Effect<Option.Option<Observed>, Files.FileError> =>
  Effect.gen(function*() {
    for (let attempt = 0;; attempt++) {
      const read = yield* readLock(path).pipe(
        Effect.map(Option.some),
        Effect.catchIf((error) => error.code === "ENOENT", () => Effect.succeedNone),
        Effect.catchIf((error) => error.code === "ELOOP", () =>
          Effect.map(Files.lstat(path), Option.map((info) => ({ text: "", info }))))
      )
      if (Option.isNone(read)) {
        return Option.none()
      }
      const { info, text } = read.value
      const ageMillis = ageOf(info, Date.now())
      if (info.isSymbolicLink()) {
        return Option.some<Observed>({
          _tag: "Unreadable",
          size: 0,
          ageMillis,
          identity: `i${info.ino}-${info.mtimeMs}`,
          link: true
        })
      }
      const decoded = decodeLock(text)
      if (Either.isRight(decoded)) {
        return Option.some<Observed>({ _tag: "Holder", info: decoded.right, ageMillis, identity: decoded.right.nonce })
      }
      if (attempt >= 10 || ageMillis >= YOUNG_MILLIS) {
        return Option.some<Observed>({
          _tag: "Unreadable",
          size: text.length,
          ageMillis,
          identity: `i${info.ino}-${info.mtimeMs}`
        })
      }
      yield* Effect.sleep("50 millis")
    }
  })

const lockText = (info: LockInfo) => new TextEncoder().encode(`${encodeLock(info)}\n`)

/**
 * Creates the lock file at `path` with `info` if there is none (exclusive create, never through a link at the name):
 * whether it did.
 */
const create = (path: string, info: LockInfo): Effect.Effect<boolean, Files.FileError> =>
  Effect.scoped(
    Files.createNew(path, 0o644).pipe(
      Effect.flatMap((file) =>
        file.write(lockText(info), 0).pipe(
          Effect.as(true),
          // Not written whole (a full disk): a lock that names no one is not left behind.
          Effect.tapError(() => Effect.ignore(Files.remove(path)))
        )
      ),
      Effect.catchIf((error) => error.code === "EEXIST", () => Effect.succeed(false))
    )
  )

/** Removes the lock at `path` if it still names `nonce` (never another run's). */
const release = (path: string, nonce: string) =>
  Files.readText(path).pipe(
    Effect.flatMap((text) =>
      Option.isSome(text) && Either.match(decodeLock(text.value), {
          onLeft: () => false,
          onRight: (info) => info.nonce === nonce
        })
        ? Files.remove(path)
        : Effect.void
    ),
    Effect.ignore
  )

/** Puts a lock naming `info` at `path` in one step, replacing what is there (see `claim`: only a stale lock). */
const replace = (path: string, info: LockInfo) => {
  const temporary = `${path}.${info.nonce}.new`
  return Effect.scoped(Effect.flatMap(Files.createNew(temporary, 0o644), (file) => file.write(lockText(info), 0))).pipe(
    Effect.zipRight(Files.rename(temporary, path)),
    Effect.tapError(() => Effect.ignore(Files.remove(temporary)))
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
  target: string,
  path: string,
  mine: LockInfo,
  here: Here,
  depth: number,
  shown: (path: string) => string
): Effect.Effect<string | undefined, OutputLocked | Files.FileError> =>
  Effect.gen(function*() {
    const refuse = (observed: Observed, verdict: Verdict) =>
      new OutputLocked({ target, reason: describeRefusal(target, shown(path), observed, verdict, Date.now()) })
    const kernelHeld = mine.kernel === true
    // Each round ends with the lock taken, a refusal, or the lock changed under it (then it looks again).
    for (let round = 0; round < 5; round++) {
      if (yield* create(path, mine)) {
        const now = yield* observe(path)
        if (Option.isSome(now) && now.value.identity === mine.nonce) return undefined
        if (Option.isNone(now)) continue
        return yield* refuse(now.value, judge(now.value, here, undefined, kernelHeld))
      }
      const observed = yield* observe(path)
      if (Option.isNone(observed)) continue
      const held = observed.value
      const verdict = judge(
        held,
        here,
        held._tag === "Holder" && held.info.host === here.host ? yield* probe(held.info.pid) : undefined,
        kernelHeld
      )
      if (verdict._tag !== "Stale") return yield* refuse(held, verdict)
      const what = held._tag === "Holder"
        ? `${shown(path)}, left by ${describeHolder(held.info, Date.now())}: ${verdict.why}`
        : `${shown(path)}: ${verdict.why}`
      if (depth >= MAX_DEPTH) {
        return yield* new OutputLocked({
          target,
          reason: `${target}: its lock is stale (${what}), and runs taking it over died too; nothing was touched. ` +
            `Remove ${shown(path)} and the ${shown(path)}.takeover-* files beside it by hand`
        })
      }
      const takeover = `${path}.takeover-${held.identity}`
      const replaced = yield* Effect.acquireUseRelease(
        claim(target, takeover, mine, here, depth + 1, shown),
        () =>
          observe(path).pipe(
            Effect.flatMap((again) =>
              Option.isSome(again) && again.value.identity === held.identity
                ? Effect.as(replace(path, mine), true)
                : Effect.succeed(false)
            )
          ),
        () => release(takeover, mine.nonce)
      )
      if (replaced) return what
    }
    return yield* new OutputLocked({
      target,
      reason: `${target}: its lock ${shown(path)} kept changing while this run tried to take it; nothing was touched`
    })
  })

const decodeAnswer = (answer: string | undefined) =>
  answer === undefined ? undefined : Either.getOrUndefined(decodeLock(answer))

/**
 * The kernel's locks of a file (see `kernelLock.ts`): one on its path, one on its device and inode when it exists.
 * Held for the scope; fails with `OutputLocked` naming the run that holds one. `false` where the platform has none.
 */
const holdKernel = (
  name: string,
  file: string,
  identity: { readonly dev: number; readonly ino: number } | undefined,
  answer: LockInfo
): Effect.Effect<boolean, OutputLocked, Scope.Scope> =>
  Effect.gen(function*() {
    if (!KernelLock.available) return false
    const digest = Crypto.createHash("sha256").update(file).digest("hex").slice(0, 40)
    // The file's own first: of runs that came by different names, the one that gets it is the one that goes on, and
    // the others name it (taken second, a name's lock would be held a moment by runs about to refuse).
    const names = [
      ...(identity === undefined ? [] : [`erp-lock/i/${identity.dev}/${identity.ino}`]),
      `erp-lock/p/${digest}`
    ]
    const text = `${encodeLock(answer)}\n`
    for (const lockName of names) {
      const outcome = yield* KernelLock.hold(lockName, text)
      if (outcome._tag === "Unavailable") return false
      if (outcome._tag === "Busy") {
        return yield* new OutputLocked({
          target: name,
          reason: describeBusy(name, decodeAnswer(outcome.answer), Date.now())
        })
      }
      yield* Effect.addFinalizer(() => outcome.held.release)
    }
    return true
  })

/**
 * Holds the lock of `file` (the file a name stands for, its links followed: `Files.followLinks`) for the scope: the
 * kernel's where there is one, and `file.lock`; taken before anything of `file` is looked at, released (the lock file
 * removed, if it still names this run) when the scope closes, however it closes. `name` is how the user named it,
 * for messages; `identity` the file's device and inode, when it exists. Fails with `OutputLocked` for a lock another
 * run holds, one this host cannot check, or one it cannot take over.
 */
export const acquire = (
  file: string,
  options: {
    readonly command: string
    readonly name?: string | undefined
    readonly identity?: { readonly dev: number; readonly ino: number } | undefined
  }
): Effect.Effect<Lock, OutputLocked | Files.FileError, Scope.Scope> =>
  Effect.gen(function*() {
    const target = options.name ?? file
    const path = `${file}.lock`
    // Files are named in messages as the user named them, unless that name leads elsewhere (a link).
    const base = NodePath.resolve(target) === file ? target : file
    const shown = (real: string) => real.startsWith(file) ? `${base}${real.slice(file.length)}` : real
    const { here, startTime } = yield* whoAmI
    const nonce = Crypto.randomBytes(16).toString("hex")
    const info: LockInfo = {
      pid: process.pid,
      host: here.host,
      since: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      command: options.command,
      nonce,
      ...(startTime === undefined ? {} : { startTime }),
      ...(here.bootId === undefined ? {} : { bootId: here.bootId }),
      ...(here.pidNamespace === undefined ? {} : { pidNamespace: here.pidNamespace }),
      ...(here.netNamespace === undefined ? {} : { netNamespace: here.netNamespace })
    }
    const kernel = yield* holdKernel(target, file, options.identity, info)
    const mine: LockInfo = kernel ? { ...info, kernel } : info
    const tookOver = yield* Effect.acquireRelease(
      claim(target, path, mine, here, 0, shown),
      () => release(path, nonce)
    )
    const verify: Lock["verify"] = Effect.gen(function*() {
      const now = yield* observe(path)
      if (Option.isSome(now) && now.value.identity === nonce) return
      return yield* new Lost({
        lockPath: shown(path),
        now: Option.isSome(now) && now.value._tag === "Holder" ? describeHolder(now.value.info, Date.now()) : undefined
      })
    })
    return { path, nonce, tookOver, verify }
  })

/**
 * Why an existing `file` must not be replaced (see `FileRules.isReadOnly`), or none: it does not exist, or may be
 * written.
 */
export const readOnly = (file: string): Effect.Effect<Option.Option<string>, Files.FileError> =>
  Effect.gen(function*() {
    const info = yield* Files.stat(file)
    if (Option.isNone(info)) return Option.none()
    const writable = yield* Files.writable(file)
    const mode = info.value.mode
    if (!FileRules.isReadOnly({ mode, uid: info.value.uid }, { uid: process.getuid?.(), writable })) {
      return Option.none()
    }
    return Option.some(FileRules.describeReadOnly(mode))
  })
