/**
 * What `erp sandbox` serves of the command line's declared resources: each one whose endpoints the sandbox does not
 * serve already (partners and invoices), from its `sample` records (the id field alone without one), found by `get`
 * with its selectors' parameters, paged, filtered, limited and faulted as partners are (`ErpRules.Options.resources`).
 */
import type * as Sandbox from "@erp-client/sandbox/Sandbox"
import type * as Resource from "@erp-client/streams/Resource"

/** How many records `erp sandbox` serves of each declared resource. */
export const sampleCount = 100

/** The sandbox's `resources` option for `declared`: those of them it does not serve already (`served`). */
export const sandboxResources = (
  declared: ReadonlyArray<Resource.Any>,
  served: ReadonlyArray<string>
): Array<Sandbox.ResourceOptions> =>
  declared
    .filter((resource) =>
      [resource.list, resource.get].every((endpoint) => endpoint === undefined || !served.includes(`/${endpoint}`))
    )
    .map((resource) => ({
      list: resource.list,
      get: resource.get,
      idField: resource.idField,
      lookups: resource.selectors.map((selector) => selector.param),
      records: {
        count: sampleCount,
        record: (index: number) => resource.sample?.(index) ?? { [resource.idField]: index + 1 }
      }
    }))
