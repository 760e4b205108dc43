/**
 * `--help` for people: the whole command in the usage line, plain text outside a terminal (and with `NO_COLOR`), and
 * failures of the argument parser as one line. `@effect/cli` renders the options; the frame around them is ours.
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as Usage from "@effect/cli/Usage"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { nearest } from "./didYouMean.js"
import { colorEnabled, locate, type PathNode, wantsHelp } from "./helpPath.js"

export { colorEnabled, locate, wantsHelp }

/**
 * What the help pages read of a command: its usage and its help. A `Command` is invariant in its types (its handler
 * takes what it parses), so the tree holds these instead of the commands themselves.
 */
export interface Described {
  readonly usage: () => Usage.Usage
  readonly help: (config: CliConfig.CliConfig) => HelpDoc.HelpDoc
}

/** A command's `Described`, read when a page is asked for. */
export const described = <Name extends string, R, E, A>(command: Command.Command<Name, R, E, A>): Described => ({
  usage: () => Command.getUsage(command),
  help: (config) => Command.getHelp(command, config)
})

/** A command of the tree, with the short line that lists it under its parent. */
export interface Node extends PathNode {
  readonly name: string
  readonly summary: string
  readonly command: Described
  readonly children: ReadonlyArray<Node>
}

/**
 * A description as help shows every one, in sentence case: its first letter upper case. A resource's declaration (its
 * description, a filter's, a selector's) may start either way; Effect's own commands start upper case.
 */
export const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)

// Built-in options (--completions, --log-level, --wizard) stay usable but out of every page: they are not ours.
export const config = CliConfig.make({ showBuiltIns: false })

// SGR sequences, the only escapes @effect/cli's renderer writes.
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g

export const stripColor = (text: string): string => text.replace(SGR, "")

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
    for (const span of Usage.enumerate(node.command.usage(), config)) {
      lines.push(...fill(usageWords(prefix + plain(span)), "  ", " ".repeat(whole.length + 3)))
    }
  }
  if (node.children.length === 0) {
    lines.push(...sections(node.command.help(config), bold))
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

/** An option of a command, as its usage line names it: its names, its value (none for a switch), repeatable or not. */
interface OptionUsage {
  readonly names: ReadonlyArray<string>
  readonly value: string | undefined
  readonly repeated: boolean
}

const optionsIn = (usage: Usage.Usage, repeated = false): ReadonlyArray<OptionUsage> => {
  switch (usage._tag) {
    case "Named":
      // Positional arguments are named too (`<ENDPOINT>`); options start with a dash.
      return usage.names.some((name) => name.startsWith("-"))
        ? [{ names: usage.names, value: Option.getOrUndefined(usage.acceptedValues), repeated }]
        : []
    case "Optional":
      return optionsIn(usage.usage, repeated)
    case "Repeated":
      return optionsIn(usage.usage, true)
    case "Alternation":
    case "Concat":
      return [...optionsIn(usage.left, repeated), ...optionsIn(usage.right, repeated)]
    default:
      return []
  }
}

// The parser compares option names without regard to case (CliConfig's default).
const named = (options: ReadonlyArray<OptionUsage>, name: string): OptionUsage | undefined =>
  options.find((option) => option.names.some((n) => n.toLowerCase() === name.toLowerCase()))

// `--name value` and `--name=value` in `args`, as the parser reads them.
const given = (args: ReadonlyArray<string>): ReadonlyArray<{ readonly name: string; readonly value?: string }> => {
  const out: Array<{ name: string; value?: string }> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (!arg.startsWith("-")) continue
    const eq = arg.indexOf("=")
    if (arg.startsWith("--") && eq > 2) out.push({ name: arg.slice(0, eq), value: arg.slice(eq + 1) })
    else if (i + 1 < args.length) out.push({ name: arg, value: args[i + 1]! })
    else out.push({ name: arg })
  }
  return out
}

const either = (items: ReadonlyArray<string>): string =>
  items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

const shown = (value: string): string => /^[\w.:@/+=,-]+$/.test(value) ? value : JSON.stringify(value)

const kinds: Readonly<Record<string, string>> = {
  integer: "a whole number",
  float: "a number",
  boolean: "true or false",
  date: "a date"
}

// What an option's value must be, said for people: the choices, or its placeholder (`--concurrency N`).
const expected = (option: OptionUsage, name: string): string =>
  option.value !== undefined && option.value.includes(" | ")
    ? either(option.value.split(" | "))
    : `${name} ${option.value ?? ""}`.trim()

/**
 * The value missing at the end of `args` (`erp partners list --format`), as the parser's own error, or `undefined`.
 * The parser drops a repeatable option's missing last value without a word (`erp api get x -p` ran without it).
 */
export const missingValue = (root: Node, args: ReadonlyArray<string>): ValidationError.ValidationError | undefined => {
  const { path } = locate(root, args)
  const last = args[args.length - 1]
  if (last === undefined || args.length < path.length) return undefined
  const option = named(optionsIn(path[path.length - 1]!.command.usage()), last)
  return option === undefined || option.value === undefined
    ? undefined
    : ValidationError.missingValue(HelpDoc.p(`Expected a value following option: '${last}'`))
}

/**
 * A failure of the argument parser as one line that names what was wrong (`--format: expected ndjson, csv or table,
 * got json`): @effect/cli's own messages name the value but not always the option. Falls back to its message.
 */
export const describeValidation = (
  root: Node,
  args: ReadonlyArray<string>,
  error: ValidationError.ValidationError
): string => {
  const said = oneLine(error.error)
  const { path } = locate(root, args)
  const node = path[path.length - 1]!
  const whole = path.map((n) => n.name).join(" ")
  const rest = args.slice(path.length - 1)
  if (node.children.length > 0 && rest.length > 0) {
    const names = node.children.map((child) => child.name)
    const meant = rest[0]!.startsWith("-") ? [] : nearest(rest[0]!, names)
    return rest[0]!.startsWith("-")
      ? `unknown option ${rest[0]}: ${whole} takes a command first (${either(names)})`
      : meant.length > 0
      ? `unknown command ${shown(rest[0]!)}: did you mean ${either(meant)}?`
      : `unknown command ${shown(rest[0]!)}: ${whole} takes ${either(names)}`
  }
  const options = optionsIn(node.command.usage())
  // A mistyped flag, named without its `=value`: the nearest of this command's own (and --help, which every command
  // takes).
  const unknownOption = (arg: string) => {
    const name = arg.startsWith("--") && arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
    const meant = nearest(name, [...options.flatMap((option) => option.names), "--help"])
    return `unknown option ${name}${meant.length > 0 ? `: did you mean ${either(meant)}?` : ""}`
  }
  // The first flag in `rest` this command does not have, values of its own options skipped. The parser may take one
  // for a positional argument (`erp api list --formt csv ENDPOINT`) and then report the value after it.
  const unknownFlag = (): string | undefined => {
    for (let i = 0; i < rest.length; i++) {
      const arg = rest[i]!
      if (!arg.startsWith("-") || arg === "-") continue
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
      const option = named(options, eq > 0 ? arg.slice(0, eq) : arg)
      if (option === undefined) return ["--help", "-h"].includes(arg) ? undefined : arg
      if (option.value !== undefined && eq < 0) i++
    }
    return undefined
  }
  const flags = given(rest)
  let match: RegExpExecArray | null
  if ((match = /^Expected one of the following cases: (.*)$/.exec(said)) !== null) {
    const choices = match[1]!.split(", ")
    const wrong = flags.find(({ name, value }) =>
      value !== undefined && !choices.includes(value) && named(options, name)?.value === choices.join(" | ")
    )
    if (wrong !== undefined) {
      // The choice meant: one an edit or two away (`--format nsjson`), or one behind a word (`--edition effect4`).
      const value = wrong.value!
      const near = nearest(value, choices)
      const meant = near.length > 0
        ? near
        : choices.filter((choice) => value.replace(/^[A-Za-z]+[\s_-]*/, "") === choice)
      return `${wrong.name}: expected ${either(choices)}, got ${shown(value)}` +
        (meant.length > 0 ? `: did you mean ${either(meant)}?` : "")
    }
  }
  if ((match = /^'(.*)' is not a (\w+)$/.exec(said)) !== null) {
    const [, value, kind] = match
    const wrong = flags.find((flag) => flag.value === value && named(options, flag.name)?.value !== undefined)
    if (wrong !== undefined) return `${wrong.name}: expected ${kinds[kind!] ?? `a ${kind}`}, got ${shown(value!)}`
  }
  if ((match = /^(?:Expected path '(.*)' to be an? (.*)|Path '(.*)' must (not )?exist)$/.exec(said)) !== null) {
    const value = match[1] ?? match[3]!
    const wrong = flags.find((flag) => flag.value === value && named(options, flag.name)?.value !== undefined)
    const problem = match[2] !== undefined
      ? `is not a ${match[2]}`
      : match[4] !== undefined
      ? "exists"
      : "does not exist"
    if (wrong !== undefined) return `${wrong.name}: ${shown(value)} ${problem}`
  }
  if ((match = /^(?:Received unknown argument|Expected a value following option): '(.*)'$/.exec(said)) !== null) {
    const arg = match[1]!
    const option = named(options, arg)
    if (option === undefined) {
      const flag = arg.startsWith("-") ? arg : unknownFlag()
      return flag !== undefined ? unknownOption(flag) : `unexpected argument ${shown(arg)}`
    }
    if (!option.repeated && flags.filter((flag) => named(options, flag.name) === option).length > 1) {
      return `${arg} is given more than once`
    }
    if (option.value !== undefined && args[args.length - 1] === arg) {
      return `${arg} needs a value: ${expected(option, arg)}`
    }
  }
  if ((match = /^The flag '(.*)' is not recognized\. Did you mean '(.*)'\?$/.exec(said)) !== null) {
    return `unknown option ${match[1]}: did you mean ${match[2]}?`
  }
  if ((match = /^More than one reference to option '(.*)' detected$/.exec(said)) !== null) {
    return `${match[1]} is given more than once`
  }
  if ((match = /^Missing argument <(.*?)>/.exec(said)) !== null) return `missing ${match[1]}`
  if ((match = /^Expected to find option: '(.*)'$/.exec(said)) !== null) return `${match[1]} is required`
  return said
}

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
