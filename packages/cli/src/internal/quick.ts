/**
 * What the executable answers without loading the command: `erp --version`, and the `--help` pages, which depend only
 * on the command tree and so are written at build time (scripts/build-cli.ts writes `dist/help.json` from
 * `Cli.helpIndex`, the same function `erp` renders them with). Loading the command costs most of a start (Effect,
 * @effect/cli, the client, fetch: `pnpm bench startup`); these answers need none of it. Anything else, or a build
 * without the pages, goes to the command, which says the same.
 */
import { type HelpIndex, locate, wantsHelp } from "./helpPath.js"

/** The text to print for `args` (the arguments after the executable), or `undefined` when the command must run. */
export const quickAnswer = (
  args: ReadonlyArray<string>,
  options: { readonly version: string; readonly help: HelpIndex | undefined; readonly color: boolean }
): string | undefined => {
  if (args.length === 1 && args[0] === "--version") return `${options.version}\n`
  if (options.help === undefined || !wantsHelp(options.help.tree, args)) return undefined
  const page = options.help.pages[locate(options.help.tree, args).path.map((node) => node.name).join(" ")]
  return page === undefined ? undefined : options.color ? page.ansi : page.plain
}
