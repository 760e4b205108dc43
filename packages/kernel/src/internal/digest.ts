/**
 * The digest of a record's text that `Changes` keeps per id (docs/changes.md): cyrb53's two 32-bit lanes, both kept
 * whole, so a run of a million records is told apart by 64 bits and allocates nothing per record.
 */

/** A 64-bit digest: its high and low 32 bits, unsigned. */
export type Digest = readonly [hi: number, lo: number]

// The two 32-bit lanes of the last digest computed: `digestInto` writes here, so a run allocates nothing per record.
export const lanes = new Uint32Array(2)

/** The two lanes of `text`'s digest into `lanes` (cyrb53's lanes and finish, both kept whole: 64 bits). */
export const digestLanes = (text: string): void => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  lanes[0] = h2
  lanes[1] = h1
}

/**
 * The 64-bit digest of a record's text exactly as the server wrote it (cyrb53's two 32-bit lanes, both kept whole):
 * any change of the text (a field, a digit, the order of fields) changes it.
 */
export const digest = (text: string): Digest => {
  digestLanes(text)
  return [lanes[0], lanes[1]]
}
