/**
 * Large records (see `Seed.largeRecordAt`): one of about a given size, made on demand, holding what makes a record
 * costly to read: a long text, a long array, an object of many fields and deep nesting.
 */

/** @internal */
export const LARGE_WIDE_FIELDS = 600

/** @internal */
export const LARGE_DEPTH = 24

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt "
const KINDS = ["report", "archive", "attachment"] as const

// About what one line of `lines` takes in the record's JSON text.
const LINE_BYTES = 52

const nested = (level: number): Record<string, unknown> =>
  level > LARGE_DEPTH ? { level } : { level, next: nested(level + 1) }

/** @internal */
export const largeRecordAt = (index: number, bytes: number): Readonly<Record<string, unknown>> => {
  const id = index + 1
  const wide: Record<string, unknown> = {}
  for (let i = 0; i < LARGE_WIDE_FIELDS; i++) wide[`field_${i}`] = i % 2 === 0 ? i * id : `value ${i}`
  const fixed = JSON.stringify({ id, name: `Large record ${id}`, kind: KINDS[index % 3], wide, deep: nested(1) })
  // What is left is shared between the text and the lines, half each.
  const rest = Math.max(0, bytes - fixed.length - 40)
  const textLength = Math.floor(rest / 2)
  const text = WORDS.repeat(Math.ceil(textLength / WORDS.length)).slice(0, textLength)
  const lines = Array.from({ length: Math.floor(rest / 2 / LINE_BYTES) }, (_, i) => ({
    line: i + 1,
    sku: `SKU-${String((i * 7919 + id) % 100_000).padStart(5, "0")}`,
    qty: 1 + (i % 9),
    price: 10 + (i % 90)
  }))
  return { id, name: `Large record ${id}`, kind: KINDS[index % 3], wide, deep: nested(1), text, lines }
}
