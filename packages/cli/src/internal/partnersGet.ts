/**
 * `erp partners get`: one partner by id or company name, as the server sent it.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ErpClient from "@erp-client/client/ErpClient"
import * as Partner from "@erp-client/core/Partner"
import * as Partners from "@erp-client/streams/Partners"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { asSent } from "./asSent.js"
import { redis, verbose, withClient } from "./common.js"

// Checked against Partner by the client, written as the server sent it.
const PartnerAsSent = asSent(Partner.Partner)

export const partnersGet = Command.make(
  "get",
  {
    selector: Options.integer("id").pipe(
      Options.withDescription("the partner's id"),
      Options.orElseEither(Options.text("company-name").pipe(Options.withDescription("the exact company name")))
    ),
    redis,
    verbose
  },
  (args) =>
    withClient(
      args,
      Effect.gen(function*() {
        const client = yield* ErpClient.ErpClient
        const by = Either.match(args.selector, {
          onLeft: (id): Partners.Selector => ({ id }),
          onRight: (companyName): Partners.Selector => ({ companyName })
        })
        const raw = yield* client.get(Partners.GET, PartnerAsSent, Partners.query(by))
        yield* Console.log(JSON.stringify(raw))
      })
    )
).pipe(Command.withDescription("look up one partner by --id or --company-name; prints one JSON object"))
