/**
 * What users would write instead: a plain loop that fetches a page, parses it and moves to the next offset, the way
 * the vendor's PHP library and most SDK auto-paginators do (sequential, no validation).
 */

export interface LoopResult {
  readonly records: number
  readonly requests: number
  readonly tooManyRequests: number
  readonly millis: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const plainLoop = async (options: {
  readonly baseUrl: string
  readonly apiKey: string
  readonly pageSize: number
  /** The naive 429 handling of such loops: wait a fixed delay and try again (none: give up). */
  readonly retryAfter429Millis?: number
}): Promise<LoopResult> => {
  const start = performance.now()
  let offset = 0
  let records = 0
  let requests = 0
  let tooManyRequests = 0
  for (;;) {
    const url = `${options.baseUrl}/partner/list?list_offset=${offset}&list_count=${options.pageSize}`
    const response = await fetch(url, { headers: { "X-API-KEY": options.apiKey, "Content-Type": "application/json" } })
    requests++
    const text = await response.text()
    if (response.status === 429) {
      tooManyRequests++
      if (options.retryAfter429Millis === undefined) throw new Error("429")
      await sleep(options.retryAfter429Millis)
      continue
    }
    const data = JSON.parse(text).data as Array<unknown>
    records += data.length
    if (data.length < options.pageSize) break
    offset += options.pageSize
  }
  return { records, requests, tooManyRequests, millis: performance.now() - start }
}

/**
 * The same loop with `concurrency` pages in flight: what a user writes to hide latency (offsets handed out in order,
 * `fetch`, `JSON.parse`, no validation), stopping at the first short page.
 */
export const plainConcurrentLoop = async (options: {
  readonly baseUrl: string
  readonly apiKey: string
  readonly pageSize: number
  readonly concurrency: number
}): Promise<LoopResult> => {
  const start = performance.now()
  let next = 0
  let records = 0
  let requests = 0
  let end = Infinity
  const worker = async () => {
    while (next < end) {
      const offset = next
      next += options.pageSize
      const url = `${options.baseUrl}/partner/list?list_offset=${offset}&list_count=${options.pageSize}`
      const response = await fetch(url, {
        headers: { "X-API-KEY": options.apiKey, "Content-Type": "application/json" }
      })
      requests++
      const data = JSON.parse(await response.text()).data as Array<unknown>
      records += data.length
      if (data.length < options.pageSize) end = Math.min(end, offset)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  return { records, requests, tooManyRequests: 0, millis: performance.now() - start }
}
