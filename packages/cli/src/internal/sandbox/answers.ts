/**
 * `erp sandbox`'s flags of answers the contract does not show: a missing list_count, a 429's body, and the messages
 * of a refused key and of a partner not found.
 */
import * as Options from "@effect/cli/Options"
import { shownDefault } from "../common.js"

/** What the sandbox answers where the contract is silent. */
export const answers = {
  defaultListCount: Options.integer("default-list-count").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Serve N records when list_count is missing (default: such a request is refused)."),
    Options.optional
  ),
  tooManyRequestsBody: Options.choice("too-many-requests-body", ["envelope", "html", "empty"] as const).pipe(
    Options.withDescription("The body of a 429 (the contract does not show it)."),
    shownDefault<"envelope" | "html" | "empty">("envelope")
  ),
  unauthorizedMessage: Options.text("unauthorized-message").pipe(
    Options.withPseudoName("TEXT"),
    Options.withDescription("The result.message for a refused key."),
    shownDefault("Unauthorized")
  ),
  notFoundMessage: Options.text("not-found-message").pipe(
    Options.withPseudoName("TEXT"),
    Options.withDescription("The result.message for a partner that does not exist."),
    shownDefault("Not found")
  )
}
