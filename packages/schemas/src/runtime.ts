/**
 * Hand-written checks for the JSON Schema keywords that zod has no builder for. The generated schemas
 * (src/generated/schemas.ts) call these; each one implements exactly one keyword's draft-07 meaning.
 */
import canonicalize from 'canonicalize'
import { z } from 'zod'

type Issue = z.core.$ZodIssue

function forward(issues: readonly Issue[], ctx: z.RefinementCtx, prefix: readonly PropertyKey[] = []): void {
  for (const issue of issues) {
    ctx.addIssue({ code: 'custom', message: messageOf(issue), path: [...prefix, ...issue.path] })
  }
}

/** An issue's message; for a failed union, the first problem of the alternative that got furthest. */
function messageOf(issue: Issue): string {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue.message
  const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]!
  const first = best[0]
  if (!first) return issue.message
  const path = first.path.map((segment) =>
    typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`,
  )
  const where = path.join('').replace(/^\./, '')
  return where ? `${where}: ${messageOf(first)}` : messageOf(first)
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * `oneOf` whose alternatives may overlap: the value must match exactly one of them.
 * (Alternatives that a const property tells apart are generated as a plain `z.union`.)
 */
export function oneOf<const T extends readonly [z.ZodType, z.ZodType, ...z.ZodType[]]>(options: T) {
  return z.union(options).superRefine((value, ctx) => {
    let matches = 0
    for (const option of options) if (option.safeParse(value).success) matches += 1
    if (matches > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `matches ${matches} of the alternatives, but exactly one is allowed`,
      })
    }
  })
}

/** `if` / `then` / `else`: the branch picked by `condition` must also hold. */
export function conditional<T extends z.ZodType>(
  schema: T,
  condition: z.ZodType,
  then: z.ZodType | undefined,
  otherwise: z.ZodType | undefined,
): T {
  return schema.superRefine((value, ctx) => {
    const branch = condition.safeParse(value).success ? then : otherwise
    if (!branch) return
    const result = branch.safeParse(value)
    if (!result.success) forward(result.error.issues, ctx)
  }) as T
}

/** `not`: the value must not match `excluded`; `message` says what was excluded. */
export function not<T extends z.ZodType>(schema: T, excluded: z.ZodType, message: string): T {
  return schema.superRefine((value, ctx) => {
    if (excluded.safeParse(value).success) ctx.addIssue({ code: 'custom', message })
  }) as T
}

/** `required` for names whose schema also accepts a missing value (zod treats those keys as optional). */
export function requireKeys<T extends z.ZodType>(schema: T, keys: readonly string[]): T {
  return schema.superRefine((value, ctx) => {
    if (!isPlainObject(value)) return
    for (const key of keys) {
      if (!(key in value)) ctx.addIssue({ code: 'custom', message: `"${key}" is required`, path: [key] })
    }
  }) as T
}

/** The object keywords zod has no builder for. */
export interface ObjectRules {
  /** `patternProperties`: keys matching a pattern must match its schema. */
  readonly patternProperties?: ReadonlyArray<readonly [RegExp, z.ZodType]>
  /** `additionalProperties: false` beside `patternProperties`: the only keys allowed. */
  readonly closed?: { readonly names: readonly string[]; readonly patterns: readonly RegExp[] }
  readonly propertyNames?: z.ZodType
  readonly minProperties?: number
  readonly maxProperties?: number
  /** `dependencies`: a present key requires other keys, or the object to match a schema. */
  readonly dependencies?: Readonly<Record<string, readonly string[] | z.ZodType>>
}

/** Applies {@link ObjectRules} to an object schema. */
export function objectRules<T extends z.ZodType>(schema: T, rules: ObjectRules): T {
  return schema.superRefine((value, ctx) => {
    if (!isPlainObject(value)) return
    const keys = Object.keys(value)
    if (rules.minProperties !== undefined && keys.length < rules.minProperties) {
      ctx.addIssue({ code: 'custom', message: `must have at least ${rules.minProperties} properties` })
    }
    if (rules.maxProperties !== undefined && keys.length > rules.maxProperties) {
      ctx.addIssue({ code: 'custom', message: `must have at most ${rules.maxProperties} properties` })
    }
    for (const key of keys) {
      if (rules.propertyNames) {
        const result = rules.propertyNames.safeParse(key)
        if (!result.success) {
          ctx.addIssue({ code: 'custom', message: `invalid property name "${key}"`, path: [key] })
        }
      }
      for (const [pattern, propertySchema] of rules.patternProperties ?? []) {
        if (!pattern.test(key)) continue
        const result = propertySchema.safeParse(value[key])
        if (!result.success) forward(result.error.issues, ctx, [key])
      }
      if (
        rules.closed &&
        !rules.closed.names.includes(key) &&
        !rules.closed.patterns.some((p) => p.test(key))
      ) {
        ctx.addIssue({ code: 'custom', message: `unrecognized key "${key}"`, path: [key] })
      }
      const dependency = rules.dependencies?.[key]
      if (dependency === undefined) continue
      if (Array.isArray(dependency)) {
        for (const needed of dependency as readonly string[]) {
          if (!(needed in value)) {
            ctx.addIssue({
              code: 'custom',
              message: `"${needed}" is required when "${key}" is present`,
              path: [needed],
            })
          }
        }
      } else {
        const result = (dependency as z.ZodType).safeParse(value)
        if (!result.success) forward(result.error.issues, ctx)
      }
    }
  }) as T
}

/** `uniqueItems: true`: no two items are equal as JSON values (compared in RFC 8785 canonical form). */
export function uniqueItems<T extends z.ZodType>(schema: T): T {
  return schema.superRefine((value, ctx) => {
    if (!Array.isArray(value)) return
    const seen = new Map<string | undefined, number>()
    value.forEach((item: unknown, index) => {
      const key = canonicalize(item)
      const first = seen.get(key)
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `duplicates item ${first}; items must be unique`,
          path: [index],
        })
      } else {
        seen.set(key, index)
      }
    })
  }) as T
}

/** `contains`: at least one item matches `item`. */
export function contains<T extends z.ZodType>(schema: T, item: z.ZodType): T {
  return schema.superRefine((value, ctx) => {
    if (Array.isArray(value) && !value.some((entry) => item.safeParse(entry).success)) {
      ctx.addIssue({ code: 'custom', message: 'must contain at least one matching item' })
    }
  }) as T
}

/** A JSON Schema `const` or `enum` member that is an object or array: deep equality in canonical form. */
export function jsonConstant<T>(expected: T) {
  const canonical = canonicalize(expected)
  return z.custom<T>((value) => canonicalize(value) === canonical, {
    message: `must equal ${canonical ?? 'the constant'}`,
  })
}

/** `format: "uri"`: an absolute URI (RFC 3986), as WHATWG URL parsing accepts it. */
export function uri() {
  return z.string().refine((value) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && URL.canParse(value), {
    message: 'must be an absolute URI',
  })
}

/**
 * `allOf` of two schemas: both must hold, each on its own. (zod's intersection forgives a key that one side
 * rejects as unknown when the other side knows it; JSON Schema does not, so strict sides are checked again.)
 */
export function allOf<L extends z.ZodType, R extends z.ZodType>(left: L, right: R): z.ZodIntersection<L, R> {
  return z.intersection(left, right).superRefine((value, ctx) => {
    for (const side of [left, right]) {
      const result = side.safeParse(value)
      if (!result.success) forward(result.error.issues, ctx)
    }
  })
}

const jsonType = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? 'number'
        : typeof value

/**
 * Keywords of one JSON type in a schema that names no `type` (`{"minItems": 1}`): they constrain values of
 * that type only, and every other value passes.
 */
export function ifType(type: 'array' | 'string' | 'number', schema: z.ZodType): z.ZodUnknown {
  return z.unknown().superRefine((value, ctx) => {
    if (jsonType(value) !== type) return
    const result = schema.safeParse(value)
    if (!result.success) forward(result.error.issues, ctx)
  })
}
