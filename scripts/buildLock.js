/**
 * One build of the command at a time (scripts/erp.js): two `pnpm erp` started together on a stale build (a sandbox and
 * a command beside it) would otherwise both rebuild into the same dist/ and one fail half-way. A process that waited
 * finds the build fresh and runs it.
 *
 * Where the platform has one (Linux), the lock is a Unix socket bound to a name in the abstract namespace, made from the
 * lock's path: one process at a time can bind it, and the kernel unbinds it when its process exits however it exits
 * (`kill -9` too, and before the parent reaps it), so a dead builder never holds the lock (as packages/cli's
 * kernelLock.ts does for exports). Elsewhere it is a file made exclusively, holding the builder's pid; one whose
 * process is gone, or a zombie (`ps` says Z), is taken over.
 */
import { spawnSync } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import process from "node:process"
import { setTimeout } from "node:timers"

const sleep = (millis) => new Promise((resolve) => setTimeout(resolve, millis))

// Binds the name: the server once bound, "busy" when another process holds it, undefined where this cannot be done.
const bind = (name) =>
  new Promise((resolve) => {
    const server = Net.createServer((socket) => socket.destroy())
    server.once("error", (error) => resolve(error?.code === "EADDRINUSE" ? "busy" : undefined))
    server.listen({ path: `\0${name}` }, () => {
      server.unref()
      resolve(server)
    })
  })

const alive = (pid) => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return error?.code === "EPERM"
  }
  // A zombie has ended: its parent has not reaped it yet, which kill(pid, 0) does not tell.
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const state = stat.slice(stat.lastIndexOf(")") + 1).trim()[0]
    return state !== "Z" && state !== "X"
  } catch {
    const ps = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
    return !(ps.status === 0 && ps.stdout.trim().startsWith("Z"))
  }
}

const takeFile = async (lock) => {
  for (;;) {
    try {
      Fs.writeFileSync(lock, String(process.pid), { flag: "wx" })
      return () => Fs.rmSync(lock, { force: true })
    } catch (error) {
      if (error?.code !== "EEXIST") throw error
    }
    let text
    try {
      text = Fs.readFileSync(lock, { encoding: "utf8", flag: Fs.constants.O_RDONLY | (Fs.constants.O_NOFOLLOW ?? 0) })
    } catch (error) {
      if (error?.code === "ENOENT") continue // released meanwhile: try again
      if (error?.code !== "ELOOP") throw error
      text = "not a lock"
    }
    const holder = Number(text)
    // An empty lock is one just made whose pid is being written, unless it has stayed empty for a while.
    const info = Fs.lstatSync(lock, { throwIfNoEntry: false })
    const justMade = text === "" && Date.now() - (info?.ctimeMs ?? 0) < 5_000
    if (justMade || (Number.isInteger(holder) && holder > 0 && alive(holder))) await sleep(100)
    else Fs.rmSync(lock, { force: true })
  }
}

/**
 * Takes the lock at `lock` (a path), waiting while another process holds it; resolves to its release.
 *
 * @param {string} lock
 * @returns {Promise<() => void>}
 */
export const take = async (lock) => {
  Fs.mkdirSync(Path.dirname(lock), { recursive: true })
  if (process.platform === "linux") {
    const name = `erp-build/${Crypto.createHash("sha256").update(Path.resolve(lock)).digest("hex").slice(0, 40)}`
    for (;;) {
      const server = await bind(name)
      if (server === "busy") {
        await sleep(100)
        continue
      }
      if (server !== undefined) return () => server.close()
      break
    }
  }
  return takeFile(lock)
}
