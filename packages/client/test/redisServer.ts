/**
 * A redis-server of the test's own, on a loopback port the OS gave as free, which the test may freeze (SIGSTOP), thaw,
 * stop and start again on the same port: the shared Redis of this machine (127.0.0.1:6379), which other tests and
 * people use, is never stopped. Plain Node (no Redis client), so both editions' tests and the command line's use it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Net from "node:net"

export interface OwnRedis {
  readonly port: number
  readonly url: string
  /** SIGSTOP: the server keeps its connections and data, and answers nothing until thawed. */
  readonly freeze: () => void
  readonly thaw: () => void
  /** Stops the server (its data is lost: no persistence) and waits for it to exit. */
  readonly stop: () => Promise<void>
  /** Starts it again on the same port, empty, and waits until it answers. */
  readonly start: () => Promise<void>
}

/** A port the OS has just given as free on 127.0.0.1 (`--port 0` is not redis-server's to take). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const answersPing = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = Net.connect(port, "127.0.0.1")
    let reply = ""
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1_000, () => done(false))
    socket.on("connect", () => socket.write("PING\r\n"))
    socket.on("data", (chunk) => {
      reply += chunk.toString()
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"))
    })
    socket.on("error", () => done(false))
  })

const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

/** Starts a redis-server of the test's own; `close` (for `afterAll`) stops it for good. */
export const startRedis = async (): Promise<OwnRedis & { readonly close: () => Promise<void> }> => {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    const started = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"],
      { stdio: "ignore" }
    )
    child = started
    running.add(started)
    started.once("exit", () => running.delete(started))
    for (let tries = 0; !(await answersPing(port)); tries++) {
      if (tries > 250 || started.exitCode !== null) throw new Error(`redis-server did not start on port ${port}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const stop = async () => {
    const current = child
    if (current === undefined || current.exitCode !== null || current.signalCode !== null) return
    const exited = new Promise((resolve) => current.once("exit", resolve))
    current.kill("SIGCONT")
    current.kill("SIGTERM")
    await exited
  }
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    stop,
    start,
    close: stop
  }
}
