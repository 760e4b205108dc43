/**
 * The partner contract as the command line applies it: records that stray from it (an empty or VAT-form tax number,
 * a company name that is null, …) are written as sent and reported, unless `--strict` makes the first one a failure.
 */
import * as Options from "@effect/cli/Options"
import * as Envelope from "@erp-client/core/Envelope"
import * as Partner from "@erp-client/core/Partner"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

export const strictFlag = Options.boolean("strict").pipe(
  Options.withDescription(
    "Fail (exit 1) at the first partner that does not match the contract (a tax number of hyphenated digit groups, " +
      "a company name). Without it, such partners are written as sent and counted on stderr."
  )
)

const checkStrict = Schema.decodeUnknownEither(Partner.StrictPartner, { onExcessProperty: "preserve" })

/** A line naming how a partner strays from the contract (its id, the field, why), or `undefined` when it does not. */
export const contractOf = (endpoint: string) => (record: unknown): string | undefined =>
  Either.match(checkStrict(record), {
    onRight: () => undefined,
    onLeft: (error) => {
      const found = Envelope.decodeErrorFrom(endpoint, "", error)
      const id = typeof record === "object" && record !== null ? (record as Record<string, unknown>).id : undefined
      return `${endpoint}: partner ${id === undefined ? "without an id" : `id ${JSON.stringify(id)}`} does not ` +
        `match the contract: ${found.path === "" ? "" : `${found.path}: `}${found.reason}`
    }
  })
