/** What a seller's catalog is made of: the official product objects it sells, as its adapter gives them. */

/** A product as the seller keeps it: the core/product.json object plus whether it is a custom product. */
export interface CatalogProduct {
  readonly product: Record<string, unknown>
  /** Custom (negotiated) products are hidden from anonymous callers. */
  readonly custom: boolean
  /** Words the brief is matched against, beyond name, description and channels. */
  readonly keywords: readonly string[]
}

/**
 * Who counts a product's delivery: the publisher's own ad server. `vendors` is the 3.1 field; the deprecated
 * `provider` string is kept beside it, as 3.1.19 allows, because buyers on the 3.0 rules (the official AdCP
 * client among them) require it and refuse a product without it.
 *
 * @example
 * firstPartyMeasurement('northwind.example').vendors // [{ domain: 'northwind.example' }]
 */
export function firstPartyMeasurement(publisherDomain: string) {
  return {
    vendors: [{ domain: publisherDomain }],
    provider: `${publisherDomain} ad server (first-party delivery counts)`,
  }
}
