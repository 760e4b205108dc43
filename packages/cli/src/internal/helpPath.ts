/**
 * Which `--help` page the arguments ask for, over the names of the command tree only: no dependency, so that the
 * executable (`bin.ts`) answers `--help` from the pages written at build time without loading the command (see
 * `quick.ts`), and the command itself (`help.ts`) decides by the same functions.
 */

/** A command of the tree as far as the arguments name it: its name and its commands. */
export interface PathNode {
  readonly name: string
  readonly children: ReadonlyArray<PathNode>
}

/** The help pages of every command, plain and with colour, keyed by the command's path (`erp partners list`). */
export interface HelpIndex {
  readonly tree: PathNode
  readonly pages: Readonly<Record<string, { readonly plain: string; readonly ansi: string }>>
}

/** The path of commands named at the start of `args` (`partners list`), and the node it ends at. */
export const locate = <N extends PathNode>(
  root: N,
  args: ReadonlyArray<string>
): { readonly path: ReadonlyArray<N> } => {
  const path: Array<N> = [root]
  for (const arg of args) {
    const next = path[path.length - 1]!.children.find((child) => child.name === arg)
    if (next === undefined) break
    path.push(next as N)
  }
  return { path }
}

/** Whether `args` ask for help: `--help`, `-h`, or a group of commands named without one of its commands. */
export const wantsHelp = (root: PathNode, args: ReadonlyArray<string>): boolean => {
  if (args.includes("--help") || args.includes("-h")) return true
  const { path } = locate(root, args)
  return path[path.length - 1]!.children.length > 0 && args.length === path.length - 1
}

/** Colour only on a terminal, and never when `NO_COLOR` is set to anything but the empty string (see README.md#the-erp-command-line). */
export const colorEnabled = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean =>
  isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")
