/**
 * `erp sandbox`'s flags of its records: how many partners it seeds and from which seed, how the list changes while it
 * is read, how seeded partners stray from the contract, and large records.
 */
import * as Options from "@effect/cli/Options"
import type * as Seed from "@erp-client/sandbox/Seed"
import { repeatable, shownDefault } from "../common.js"

/** The seeded partners, and the seed of everything random. */
export const data = {
  partners: Options.integer("partners").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("How many seeded partners the list starts with."),
    shownDefault(1000)
  ),
  seed: Options.integer("seed").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("The seed of the partners, the latency jitter, the random faults and the drift."),
    shownDefault(1)
  )
}

/** A list that changes while it is read. */
export const drift = {
  inserts: Options.integer("inserts").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Partners inserted at random positions before every list answer (data that changes)."),
    shownDefault(0)
  ),
  deletes: Options.integer("deletes").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("Partners deleted at random positions before every list answer."),
    shownDefault(0)
  )
}

// How seeded partners may stray from the contract (`--odd-kind`), as the sandbox names them (a test holds the two
// lists equal).
export const oddKindNames = [
  "tax-number-empty",
  "tax-number-null",
  "tax-number-absent",
  "tax-number-eu-vat",
  "tax-number-spaces",
  "tax-number-slashes",
  "tax-number-number",
  "company-name-null",
  "company-name-empty",
  "customer-flag-string",
  "customer-flag-boolean",
  "customer-flag-absent",
  "extra-object",
  "number-beyond-double",
  "decimal-as-written",
  "id-beyond-double",
  "duplicate-id"
] as const satisfies ReadonlyArray<Seed.OddKind>

/** Seeded partners that stray from the contract as real data does. */
export const odd = {
  oddRate: Options.float("odd-rate").pipe(
    Options.withPseudoName("SHARE"),
    Options.withDescription(
      "The share of seeded partners (0 to 1) that stray from the contract as real data does: an empty, null or " +
        "VAT-form tax number, a null company name, a customer flag as a string, … (seeded; see --odd-kind)."
    ),
    shownDefault(0)
  ),
  oddKind: Options.choice("odd-kind", oddKindNames).pipe(
    Options.withDescription(
      "Only these ways of straying, with --odd-rate. Default: each way that keeps the integer id and every " +
        "number's value; number-beyond-double, decimal-as-written (numbers a float would change, written " +
        "exactly), id-beyond-double and duplicate-id only when named."
    ),
    repeatable
  )
}

/** Records of megabytes each, served beside the partners. */
export const large = {
  largeRecords: Options.integer("large-records").pipe(
    Options.withPseudoName("N"),
    Options.withDescription(
      "Also serve large/list and large/get: N records of about --large-record-bytes each, made on demand (a long " +
        "text, a long array of lines, an object of 600 fields, objects nested 25 deep), to see what a client holds " +
        "in memory."
    ),
    shownDefault(0)
  ),
  largeRecordBytes: Options.integer("large-record-bytes").pipe(
    Options.withPseudoName("BYTES"),
    Options.withDescription("About how many bytes of JSON each of the --large-records takes."),
    shownDefault(8_000_000)
  )
}
