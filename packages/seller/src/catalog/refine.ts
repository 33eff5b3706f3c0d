/**
 * get_products in `refine` mode: each refine entry is answered in `refinement_applied[]` (same order, scope and
 * id echoed). A request-scope ask naming guaranteed or non-guaranteed delivery narrows the products (applied);
 * other asks are noted (partial). A product-scope entry keeps that product in the answer (applied) or is
 * `unable` when the product does not exist; proposal-scope entries are `unable` (this seller makes no proposals).
 */
import type { CatalogProduct } from './types.js'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The refined products and the per-entry answers. */
export function refine(
  entries: readonly CatalogProduct[],
  refinements: readonly unknown[],
): { products: CatalogProduct[]; applied: Record<string, unknown>[] } {
  let products = [...entries]
  const applied: Record<string, unknown>[] = []
  const kept: string[] = []
  for (const item of refinements.filter(isObject)) {
    if (item.scope === 'request') {
      const ask = String(item.ask ?? '').toLowerCase()
      const wanted = /non[- ]?guaranteed/.test(ask)
        ? 'non_guaranteed'
        : /guaranteed/.test(ask)
          ? 'guaranteed'
          : undefined
      if (wanted) products = products.filter((entry) => entry.product.delivery_type === wanted)
      applied.push({
        scope: 'request',
        status: wanted ? 'applied' : 'partial',
        notes: wanted
          ? `kept ${wanted.replace('_', '-')} products only`
          : 'noted; this seller narrows refinements by delivery type and product only',
      })
    } else if (item.scope === 'product') {
      const id = String(item.product_id)
      const exists = entries.some((entry) => entry.product.product_id === id)
      if (exists) kept.push(id)
      applied.push({
        scope: 'product',
        product_id: id,
        status: exists ? 'applied' : 'unable',
        ...(exists ? {} : { notes: `no product ${id}` }),
      })
    } else {
      applied.push({
        scope: 'proposal',
        proposal_id: String(item.proposal_id),
        status: 'unable',
        notes: 'this seller does not make proposals',
      })
    }
  }
  const first = entries.filter((entry) => kept.includes(entry.product.product_id as string))
  const rest = products.filter((entry) => !kept.includes(entry.product.product_id as string))
  return { products: [...first, ...rest], applied }
}
