/**
 * `erp sandbox`'s flags of its rate limit: how many requests a window allows, and how its headers and 429s say so.
 */
import * as Options from "@effect/cli/Options"
import type * as RateLimit from "@erp-client/sandbox/RateLimit"
import { shownDefault } from "../common.js"

/** The rate limit, per API key and endpoint, and the ways its headers may differ from the contract's. */
export const rateLimit = {
  limit: Options.integer("limit").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Requests per window, per API key and endpoint; more are answered 429."),
    shownDefault(100)
  ),
  window: Options.integer("window").pipe(
    Options.withPseudoName("SECONDS"),
    Options.withDescription("The rate-limit window (a sliding window)."),
    shownDefault(30)
  ),
  resetUnit: Options.choice("reset-unit", ["epoch-seconds", "epoch-millis", "seconds", "iso", "http-date"]).pipe(
    Options.withDescription(
      "What X-RateLimit-Reset counts in (the contract does not say); iso and http-date write it as a date."
    ),
    shownDefault<RateLimit.ResetUnit>("epoch-seconds")
  ),
  noLimitHeaders: Options.boolean("no-limit-headers").pipe(
    Options.withDescription("Send no X-RateLimit-* headers: the client must find the limit from the 429s alone.")
  ),
  limitRetryAfter: Options.boolean("limit-retry-after").pipe(
    Options.withDescription("The window's 429s also carry Retry-After: the seconds until it allows again.")
  ),
  resetSkew: Options.integer("reset-skew").pipe(
    Options.withPseudoName("SECONDS"),
    Options.withDescription(
      "Shift X-RateLimit-Reset by this many seconds, on answers and 429s alike: negative puts the reset in the " +
        "past, as a server with a slow clock does (--reset-skew=-3600); 3600 is absurd."
    ),
    shownDefault(0)
  ),
  noRateLimit: Options.boolean("no-rate-limit").pipe(Options.withDescription("Serve without a rate limit."))
}
