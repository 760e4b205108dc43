/**
 * Every flag of `erp sandbox`, grouped by concern. The groups' order is the order `--help` lists the flags in.
 */
import type * as Command from "@effect/cli/Command"
import { answers } from "./answers.js"
import { failing, faults, latency, outage } from "./faults.js"
import { access, listen } from "./listen.js"
import { pages } from "./pages.js"
import { rateLimit } from "./rateLimit.js"
import { data, drift, large, odd } from "./records.js"

/** The flags, group by group. */
export const flags = {
  listen,
  data,
  access,
  rateLimit,
  pages,
  latency,
  faults,
  outage,
  failing,
  drift,
  odd,
  large,
  answers
}

/** The flags as parsed, group by group. */
export type Flags = Command.Command.ParseConfig<typeof flags>
