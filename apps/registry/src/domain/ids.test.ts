/** UUIDv7 generation: format, in-process monotonicity, and ids that stay above a floor made by a faster clock. */
import { describe, expect, it } from 'vitest'
import { uuidv7, uuidv7After } from './ids.js'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A version-7 id for millisecond `ms` and counter `sequence` (random part fixed). */
const v7 = (ms: number, sequence: number, tail = '8000-000000000000') => {
  const hex = ms.toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7${sequence.toString(16).padStart(3, '0')}-${tail}`
}
const msOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)
/** This process's current id millisecond: the clock, or later when earlier ids (other test files) went ahead. */
const current = () => msOf(uuidv7())

describe('uuidv7', () => {
  it('makes version-7, variant-1 ids that sort in creation order within one millisecond', () => {
    const now = Date.now()
    const ids = Array.from({ length: 50 }, () => uuidv7(now))
    for (const id of ids) expect(id).toMatch(V7)
    expect(ids).toEqual([...ids].sort())
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('uuidv7After', () => {
  it('is greater than a floor written by an instance whose clock is ahead', () => {
    const now = current()
    const floor = v7(now + 60_000, 5, 'bfff-ffffffffffff')
    const id = uuidv7After(floor, now)
    expect(id).toMatch(V7)
    expect(id > floor).toBe(true)
    // It stays in the floor's millisecond (the next counter value) rather than jumping ahead.
    expect(msOf(id)).toBe(now + 60_000)
    expect(id.slice(14, 18)).toBe('7006')
    // Later ids of this process keep sorting after it, whatever the clock says.
    const next = uuidv7(now)
    expect(next > id).toBe(true)
  })

  it('moves to the next millisecond when the floor used the last counter value', () => {
    const now = current()
    const floor = v7(now + 120_000, 0xfff, 'bfff-ffffffffffff')
    const id = uuidv7After(floor, now)
    expect(id).toMatch(V7)
    expect(id > floor).toBe(true)
    expect(msOf(id)).toBe(now + 120_001)
  })

  it('uses the clock when it is ahead of the floor, and works without a floor', () => {
    const later = current() + 600_000
    const floor = v7(later - 10, 3)
    const id = uuidv7After(floor, later)
    expect(msOf(id)).toBe(later)
    expect(uuidv7After(undefined, later) > id).toBe(true)
  })

  it('stays above a floor of another UUID version in the same millisecond', () => {
    const now = current() + 900_000
    const hex = now.toString(16).padStart(12, '0')
    const v8 = `${hex.slice(0, 8)}-${hex.slice(8)}-8000-8000-000000000000`
    const id = uuidv7After(v8, now - 5)
    expect(id > v8).toBe(true)
    expect(id).toMatch(V7)
  })
})
