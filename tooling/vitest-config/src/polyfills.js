// Vitest 5's reporters call Map.groupBy and Object.groupBy, which Node 20 lacks (they came in Node 21): without
// these, a failing test crashes the reporter instead of being printed. Loaded by every vitest config.
if (typeof Map.groupBy !== 'function') {
  Object.defineProperty(Map, 'groupBy', {
    configurable: true,
    writable: true,
    /**
     * @param {Iterable<unknown>} items
     * @param {(item: unknown, index: number) => unknown} keyOf
     */
    value(items, keyOf) {
      const groups = new Map()
      let index = 0
      for (const item of items) {
        const key = keyOf(item, index++)
        const group = groups.get(key)
        if (group) group.push(item)
        else groups.set(key, [item])
      }
      return groups
    },
  })
}
if (typeof Object.groupBy !== 'function') {
  Object.defineProperty(Object, 'groupBy', {
    configurable: true,
    writable: true,
    /**
     * @param {Iterable<unknown>} items
     * @param {(item: unknown, index: number) => PropertyKey} keyOf
     */
    value(items, keyOf) {
      /** @type {Record<PropertyKey, unknown[]>} */
      const groups = Object.create(null)
      let index = 0
      for (const item of items) {
        const key = keyOf(item, index++)
        ;(groups[key] ??= []).push(item)
      }
      return groups
    },
  })
}
