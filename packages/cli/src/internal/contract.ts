/**
 * The partner contract as the command line applies it: records that stray from it (an empty or VAT-form tax number,
 * a company name that is null, …) are written as sent and reported, unless `--strict` makes the first one a failure.
 */
import * as Options from "@effect/cli/Options"
import * as Envelope from "@erp-client/core/Envelope"
import * as JsonText from "@erp-client/core/JsonText"
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

// The id as the server wrote it, when the record's text is at hand: parsed, an id past 2^53 - 1 is a neighbour's.
const idText = (record: unknown, json: string | undefined): string | undefined => {
  const id = typeof record === "object" && record !== null ? (record as Record<string, unknown>).id : undefined
  if (id === undefined) return undefined
  let sent: string | undefined
  if (json !== undefined && typeof id === "number" && !Number.isSafeInteger(id)) {
    for (const member of Either.getOrElse(JsonText.members(json), () => [])) if (member.key === "id") sent = member.json
  }
  return sent ?? JSON.stringify(id)
}

/**
 * A line naming how a partner strays from the contract (its id, the field, why), or `undefined` when it does not.
 * `json`, the record's text as the server wrote it, names an id past 2^53 - 1 as sent.
 */
export const contractOf = (endpoint: string) => (record: unknown, json?: string): string | undefined =>
  Either.match(checkStrict(record), {
    onRight: () => undefined,
    onLeft: (error) => {
      const found = Envelope.decodeErrorFrom(endpoint, "", error)
      const id = idText(record, json)
      return `${endpoint}: partner ${id === undefined ? "without an id" : `id ${id}`} does not ` +
        `match the contract: ${found.path === "" ? "" : `${found.path}: `}${found.reason}`
    }
  })
