/**
 * The valid API keys, which tests change while the ERP serves (a key revoked in the middle of an export).
 *
 * @internal
 */
export interface ApiKeys {
  /** The first valid key at start, or `""` when there was none. */
  readonly first: string
  readonly isValid: (key: string) => boolean
  readonly revoke: (key: string) => void
  readonly set: (keys: ReadonlyArray<string>) => void
  /**
   * A query value as the request log may keep it: a value equal to a valid key, or to the key the request sent, is
   * replaced, so no key reaches the log even when a client puts it in the URL.
   */
  readonly redact: (value: string, sentKey: string) => string
}

/**
 * @internal
 */
export const make = (initial: ReadonlyArray<string>): ApiKeys => {
  let keys = new Set(initial)
  return {
    first: initial[0] ?? "",
    isValid: (key) => keys.has(key),
    revoke: (key) => {
      keys.delete(key)
    },
    set: (next) => {
      keys = new Set(next)
    },
    redact: (value, sentKey) => keys.has(value) || (value === sentKey && sentKey !== "") ? "<redacted>" : value
  }
}
