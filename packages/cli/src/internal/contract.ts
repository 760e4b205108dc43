/**
 * A resource's contract as the command line applies it (its strict schema): records that stray from it (for partners,
 * an empty or VAT-form tax number, a company name that is null, …) are written as sent and reported, unless `--strict`
 * makes the first one a failure.
 */
import * as Options from "@effect/cli/Options"
import * as Envelope from "@erp-client/core/Envelope"
import * as JsonText from "@erp-client/core/JsonText"
import type * as Resource from "@erp-client/streams/Resource"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** What one record of a resource is called: `partner` for `partners`. */
export const recordName = (resource: Resource.Any): string => resource.name.replace(/s$/, "")

/** `--strict`, for a resource with a strict schema; no flag (always false) for one without. */
export const strictFlag = (resource: Resource.Any): Options.Options<boolean> =>
  resource.strict === undefined
    ? Options.map(Options.none, () => false)
    : Options.boolean("strict").pipe(
      Options.withDescription(
        `Fail (exit 1) at the first ${recordName(resource)} that does not match the contract` +
          `${resource.contract === undefined ? "" : ` (${resource.contract})`}. Without it, such ${resource.name} ` +
          "are written as sent and counted on stderr."
      )
    )

// The id as the server wrote it, when the record's text is at hand: parsed, an id past 2^53 - 1 is a neighbour's.
const idText = (record: unknown, json: string | undefined, idField: string): string | undefined => {
  const id = typeof record === "object" && record !== null ? (record as Record<string, unknown>)[idField] : undefined
  if (id === undefined) return undefined
  let sent: string | undefined
  if (json !== undefined && typeof id === "number" && !Number.isSafeInteger(id)) {
    for (const member of Either.getOrElse(JsonText.members(json), () => [])) {
      if (member.key === idField) sent = member.json
    }
  }
  return sent ?? JSON.stringify(id)
}

/**
 * A line naming how a record of `resource` from `endpoint` strays from the contract (its id, the field, why), or
 * `undefined` when it does not (or the resource declares no contract). `json`, the record's text as the server wrote
 * it, names an id past 2^53 - 1 as sent.
 */
export const contractOf = (resource: Resource.Any, endpoint: string) => {
  if (resource.strict === undefined) return () => undefined
  const check = Schema.decodeUnknownEither(resource.strict, { onExcessProperty: "preserve" })
  const name = recordName(resource)
  return (record: unknown, json?: string): string | undefined =>
    Either.match(check(record), {
      onRight: () => undefined,
      onLeft: (error) => {
        const found = Envelope.decodeErrorFrom(endpoint, "", error)
        const id = idText(record, json, resource.idField)
        return `${endpoint}: ${name} ${id === undefined ? "without an id" : `${resource.idField} ${id}`} does not ` +
          `match the contract: ${found.path === "" ? "" : `${found.path}: `}${found.reason}`
      }
    })
}
