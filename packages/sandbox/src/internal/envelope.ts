import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { CODE_ERROR, CODE_OK } from "@erp-client/core/Envelope"

/** @internal */
export const JSON_TYPE = "application/json"

/**
 * The response envelope of every endpoint (docs/erp-api-v2.md, "Response envelope"), as text.
 *
 * @internal
 */
export const envelope = (code: number, message: string | null, data: unknown): string =>
  JSON.stringify({ result: { code, message }, data })

/** @internal */
export const success = (data: unknown): string => envelope(CODE_OK, null, data)

/** @internal */
export const failure = (message: string): string => envelope(CODE_ERROR, message, null)

/**
 * A JSON response with this body text, as sent.
 *
 * @internal
 */
export const json = (
  body: string,
  status: number,
  headers: Record<string, string>
): HttpServerResponse.HttpServerResponse => HttpServerResponse.text(body, { status, headers, contentType: JSON_TYPE })
