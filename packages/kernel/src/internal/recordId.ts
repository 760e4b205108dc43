import * as JsonText from "../JsonText.js"

/**
 * The id of a record that does not decode, to name it in the error: as sent, when the parsed number is not the number
 * sent (an id past 2^53 - 1 would otherwise be named by a neighbour's value) and the record's text is at hand.
 *
 * @example
 * ```ts
 * import { recordIdOf } from "./recordId.js"
 *
 * const text = `{"id":12345678901234567890,"company_name":"Big"}`
 * console.log(recordIdOf(JSON.parse(text), text)) // => 12345678901234567890
 * console.log(recordIdOf({ id: 7 }, undefined)) // => 7
 * ```
 */
export const recordIdOf = (raw: unknown, json: string | undefined): unknown => {
  const id = typeof raw === "object" && raw !== null && "id" in raw ? (raw as { readonly id: unknown }).id : undefined
  if (typeof id !== "number" || Number.isSafeInteger(id) || json === undefined) return id
  const members = JsonText.members(json)
  if (!members.ok) return id
  let sent: string | null | undefined
  for (const member of members.value) if (member.key === "id") sent = member.cell
  return sent ?? id
}
