/**
 * `--help` for people: the whole command in the usage line, plain text outside a terminal (and with `NO_COLOR`), and
 * failures of the argument parser as one line. `@effect/cli` renders the options; the frame around them is ours.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"

/** A command of the tree, with the short line that lists it under its parent. */
export interface Node {
  readonly name: string
  readonly summary: string
  readonly command: Command.Command<any, any, any, any>
  readonly children: ReadonlyArray<Node>
}

// Built-in options (--completions, --log-level, --wizard) stay usable but out of every page: they are not ours.
export const config = CliConfig.make({ showBuiltIns: false })

/** Colour only on a terminal, and never when `NO_COLOR` is set to anything but the empty string (see README.md#the-erp-command-line). */
export const colorEnabled = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean =>
  isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "")

// SGR sequences, the only escapes @effect/cli's renderer writes.
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g

export const stripColor = (text: string): string => text.replace(SGR, "")

/** The path of commands named at the start of `args` (`partners list`), and the node it ends at. */
export const locate = (root: Node, args: ReadonlyArray<string>): { readonly path: ReadonlyArray<Node> } => {
  const path: Array<Node> = [root]
  for (const arg of args) {
    const next = path[path.length - 1]!.children.find((child) => child.name === arg)
    if (next === undefined) break
    path.push(next)
  }
  return { path }
}

/** Whether `args` ask for help: `--help`, `-h`, or a group of commands named without one of its commands. */
export const wantsHelp = (root: Node, args: ReadonlyArray<string>): boolean => {
  if (args.includes("--help") || args.includes("-h")) return true
  const { path } = locate(root, args)
  return path[path.length - 1]!.children.length > 0 && args.length === path.length - 1
}

const text = (doc: HelpDoc.HelpDoc) => HelpDoc.toAnsiText(doc)
const plain = (span: Span.Span) => stripColor(text(HelpDoc.p(span))).trim()

// @effect/cli's generic lines (the type of a value, "optional"): the usage line and the descriptions say it better.
const GENERIC =
  /^(A true or false value|A user-defined piece of text( that is confidential)?|An integer|A floating point number|A file|A directory|A path|This setting is optional|This option may be repeated zero or more times)\.$|^One of the following: /

const WIDTH = 100

// Words of a usage line, an option in brackets kept whole: `[--format ndjson | csv | table]`.
const usageWords = (line: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let depth = 0
  let word = ""
  for (const char of line) {
    if (char === "[" || char === "(") depth++
    if (char === "]" || char === ")") depth--
    if (char === " " && depth === 0) {
      if (word !== "") words.push(word)
      word = ""
    } else word += char
  }
  if (word !== "") words.push(word)
  return words
}

// Greedy filling to WIDTH, later lines indented by `indent`.
const fill = (words: ReadonlyArray<string>, first: string, indent: string): Array<string> => {
  const lines: Array<string> = []
  let line = first
  for (const word of words) {
    const start = line === first || line === indent
    if (!start && line.length + 1 + word.length > WIDTH) {
      lines.push(line)
      line = indent + word
    } else line += (start ? "" : " ") + word
  }
  lines.push(line)
  return lines
}

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : doc._tag === "Empty" ? [] : [doc]

// A command's own help (DESCRIPTION, ARGUMENTS, OPTIONS) as @effect/cli builds it, set compactly: each option on a
// line of its own, its description beneath, without the generic lines.
const sections = (doc: HelpDoc.HelpDoc, bold: (s: string) => string): Array<string> =>
  flatten(doc).flatMap((block) => {
    switch (block._tag) {
      case "Header":
        return ["", bold(plain(block.value))]
      case "Paragraph":
        return fill(plain(block.value).split(" "), "  ", "  ")
      case "DescriptionList":
        return block.definitions.flatMap(([term, description]) => {
          const said = flatten(description).flatMap((part) => part._tag === "Paragraph" ? [plain(part.value)] : [])
            .filter((line) => !GENERIC.test(line))
          return [`  ${bold(plain(term))}`, ...fill(said.join(" ").split(" "), "      ", "      ")]
        })
      default:
        return [stripColor(text(block))]
    }
  })

/** The help page of the command `args` name (the deepest one found); `color` makes headings and options bold. */
export const page = (
  root: Node,
  args: ReadonlyArray<string>,
  options: { readonly color: boolean; readonly footer: ReadonlyArray<string> }
): string => {
  const bold = (s: string) => options.color ? `\u001b[1m${s}\u001b[0m` : s
  const { path } = locate(root, args)
  const node = path[path.length - 1]!
  const whole = path.map((n) => n.name).join(" ")
  // @effect/cli's usage starts at the command's own name; the words before it are the path to it.
  const prefix = path.slice(0, -1).map((n) => `${n.name} `).join("")
  const lines = [bold(whole)]
  // A command's page has its description below; a group's has only this line.
  if (node.children.length > 0) lines.push(...fill(node.summary.split(" "), "  ", "  "))
  lines.push("", bold("USAGE"))
  if (node.children.length > 0) lines.push(`  ${whole} COMMAND [OPTIONS]`)
  else {
    for (const span of Usage.enumerate(Command.getUsage(node.command), config)) {
      lines.push(...fill(usageWords(prefix + plain(span)), "  ", " ".repeat(whole.length + 3)))
    }
  }
  if (node.children.length === 0) {
    lines.push(...sections(Command.getHelp(node.command, config), bold))
  } else {
    const rows = node.children.flatMap((
      child
    ) => [child, ...child.children.map((c) => ({ ...c, name: `${child.name} ${c.name}` }))])
    const width = Math.max(...rows.map((row) => row.name.length)) + whole.length + 3
    lines.push("", bold("COMMANDS"), ...rows.map((row) => `  ${`${whole} ${row.name}`.padEnd(width)}${row.summary}`))
    lines.push("", `  ${whole} COMMAND --help shows a command's options.`)
  }
  for (const line of options.footer) lines.push("", ...fill(line.split(" "), "", ""))
  return lines.join("\n") + "\n"
}

/** A parser failure as one line: @effect/cli's message, without colour, its paragraphs joined. */
export const oneLine = (doc: HelpDoc.HelpDoc): string =>
  stripColor(text(doc)).split("\n").map((line) => line.trim()).filter((line) => line !== "").join("; ")

/**
 * The console the parser runs with: colour only where `colorEnabled` says, and its own error printing silenced (the
 * failure it reports comes back as a `ValidationError`, which `main` prints as one line). Logs do not use it: the
 * logger writes through `unsafe`, left as it is.
 */
export const parserConsole = (base: Console.Console, color: boolean): Console.Console => ({
  ...base,
  log: (...args: ReadonlyArray<unknown>) =>
    base.log(...args.map((a) => typeof a === "string" && !color ? stripColor(a) : a)),
  error: () => Effect.void
})
