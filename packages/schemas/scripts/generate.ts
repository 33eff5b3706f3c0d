/**
 * Generates src/generated/schemas.ts: zod 4 code for the AdCP 3.1.19 JSON Schemas named in roots.ts and
 * everything they reference.
 *
 * Why a code generator of our own rather than a converter library: zod's own JSON Schema import
 * (`z.fromJSONSchema`) builds schemas at run time only and rejects `not` and `if`/`then`/`else`, which the
 * AdCP schemas use hundreds of times; json-schema-to-zod is unmaintained since March 2026 and types `oneOf`
 * as `any`. This generator emits typed zod builders and delegates each keyword zod cannot express to one
 * small check in src/runtime.ts. The tests compare its verdicts with Ajv's (a maintained draft-07 validator)
 * on every example the vendored conformance data carries.
 *
 * Usage: tsx scripts/generate.ts [--check]   (--check exits 1 when the committed file is out of date)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ROOT_SHAPES } from './roots.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type SchemaNode = boolean | { [key: string]: Json }

const VERSION = '3.1.19'
const ID_PREFIX = `/schemas/${VERSION}/`
const here = path.dirname(fileURLToPath(import.meta.url))
export const SCHEMA_DIR = path.resolve(here, `../../../conformance/schemas/${VERSION}`)
export const OUTPUT_FILE = path.resolve(here, '../src/generated/schemas.ts')

/** Keywords that only annotate; a schema made of these alone accepts anything. */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'example',
  'deprecated',
  'readOnly',
  'writeOnly',
  'definitions',
  '$defs',
  'discriminator',
  'enumDescriptions',
  'enumMetadata',
  'x-entity',
  'x-status',
  'x-adcp-version',
  'x-deprecated',
  'contentMediaType',
  'contentEncoding',
])
/** Formats that are annotations here (no check): they have no standard validator. */
const UNCHECKED_FORMATS = new Set(['uri-template', 'YYYYMMDD', 'uri-reference'])

interface NodeRef {
  readonly file: string // path below schemas/<version>/
  readonly pointer: string // '' or '/definitions/x'
}
const keyOf = (ref: NodeRef) => `${ref.file}#${ref.pointer}`

function loadDocuments(dir: string): Map<string, Json> {
  const documents = new Map<string, Json>()
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith('.json')) {
        documents.set(
          path.relative(dir, full).split(path.sep).join('/'),
          JSON.parse(readFileSync(full, 'utf8')),
        )
      }
    }
  }
  walk(dir)
  return documents
}

const pascal = (text: string) =>
  text
    .replace(/\.json$/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')

/** The generated module's text. */
export function generate(schemaDir: string = SCHEMA_DIR): string {
  return build(schemaDir).code
}

/**
 * Generates the module and says which export holds which schema: `names` maps `file#pointer` (for example
 * `core/format.json#`) to the export's name without the `Schema` suffix.
 */
export function build(schemaDir: string = SCHEMA_DIR): { code: string; names: ReadonlyMap<string, string> } {
  const documents = loadDocuments(schemaDir)

  const resolve = (ref: NodeRef): SchemaNode => {
    let node = documents.get(ref.file) as Json | undefined
    if (node === undefined) throw new Error(`unknown schema file ${ref.file}`)
    for (const segment of ref.pointer.split('/').filter(Boolean)) {
      node = (node as Record<string, Json>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')]
      if (node === undefined) throw new Error(`unresolvable pointer ${keyOf(ref)}`)
    }
    return node as SchemaNode
  }
  const parseRef = (value: string, from: NodeRef): NodeRef => {
    if (value.startsWith('#')) return { file: from.file, pointer: value.slice(1) }
    const [file, pointer = ''] = value.split('#') as [string, string?]
    if (!file.startsWith(ID_PREFIX)) throw new Error(`unexpected $ref ${value} in ${keyOf(from)}`)
    return { file: file.slice(ID_PREFIX.length), pointer }
  }

  // 1. The closure of the roots over $ref, with each node's direct dependencies.
  const dependencies = new Map<string, NodeRef[]>()
  const nodes = new Map<string, NodeRef>()
  const collectRefs = (node: Json, from: NodeRef, out: NodeRef[]) => {
    if (Array.isArray(node)) for (const item of node) collectRefs(item, from, out)
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') out.push(parseRef(value, from))
        else if (key !== 'definitions' && key !== '$defs' && !ANNOTATIONS.has(key))
          collectRefs(value, from, out)
        else if (key === 'examples' || key === 'default' || key === 'description') continue
      }
    }
  }
  const rootRefs = ROOT_SHAPES.map((root) => {
    const [file, pointer = ''] = root.file.split('#') as [string, string?]
    return { ref: { file, pointer }, name: root.name }
  })
  const pending = rootRefs.map((root) => root.ref)
  while (pending.length > 0) {
    const ref = pending.pop()!
    if (nodes.has(keyOf(ref))) continue
    nodes.set(keyOf(ref), ref)
    const refs: NodeRef[] = []
    collectRefs(resolve(ref) as Json, ref, refs)
    dependencies.set(keyOf(ref), refs)
    pending.push(...refs)
  }

  // 2. Names: roots keep theirs; the rest are named after their file (and definition), with the folder
  //    prefixed where two would collide.
  const names = new Map<string, string>()
  const taken = new Set<string>()
  for (const root of rootRefs) {
    names.set(keyOf(root.ref), root.name)
    taken.add(root.name)
  }
  const others = [...nodes.values()]
    .filter((ref) => !names.has(keyOf(ref)))
    .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))
  const shortName = (ref: NodeRef, withFolder: boolean) => {
    const parts = ref.file.split('/')
    const base = pascal(parts.at(-1)!) + pascal(ref.pointer.split('/').at(-1) ?? '')
    return withFolder ? pascal(parts.slice(0, -1).join('-')) + base : base
  }
  const counts = new Map<string, number>()
  for (const ref of others) counts.set(shortName(ref, false), (counts.get(shortName(ref, false)) ?? 0) + 1)
  for (const ref of others) {
    let name = shortName(ref, false)
    if (counts.get(name)! > 1 || taken.has(name)) name = shortName(ref, true)
    if (taken.has(name)) name = pascal(ref.file.replace(/\//g, '-')) + pascal(ref.pointer)
    if (taken.has(name)) throw new Error(`cannot name ${keyOf(ref)}: ${name} is taken`)
    names.set(keyOf(ref), name)
    taken.add(name)
  }

  // 3. Topological order (dependencies first); the AdCP 3.1.19 graph has no cycles, and we say so loudly if
  //    a later version adds one, since a cycle needs z.lazy and an explicit type.
  const order: NodeRef[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (ref: NodeRef, trail: string[]) => {
    const key = keyOf(ref)
    if (state.get(key) === 'done') return
    if (state.get(key) === 'visiting') throw new Error(`$ref cycle: ${[...trail, key].join(' -> ')}`)
    state.set(key, 'visiting')
    const deps = [...(dependencies.get(key) ?? [])].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))
    for (const dep of deps) visit(dep, [...trail, key])
    state.set(key, 'done')
    order.push(ref)
  }
  for (const ref of [...nodes.values()].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1))) visit(ref, [])

  // 4. Emit.
  const emitter = new Emitter(
    (value, from) => names.get(keyOf(parseRef(value, from)))!,
    (value, from) => {
      const ref = parseRef(value, from)
      return { node: resolve(ref), ref }
    },
  )
  const blocks: string[] = []
  for (const ref of order) {
    const node = resolve(ref)
    const name = names.get(keyOf(ref))!
    const doc = typeof node === 'object' ? docComment(node, ref) : `/** ${keyOf(ref)} */`
    const emitted = emitter.emit(node, ref, '')
    if (emitted.strict) emitter.strictNames.add(`${name}Schema`)
    if (emitted.tags) emitter.tagsByName.set(`${name}Schema`, emitted.tags)
    blocks.push(
      `${doc}\nexport const ${name}Schema: ${emitted.type} = ${emitted.value}\nexport type ${name} = z.infer<typeof ${name}Schema>`,
    )
  }
  const helpers = [...emitter.helpers].sort()
  const text = [
    '// Generated by packages/schemas/scripts/generate.ts from the AdCP 3.1.19 JSON Schemas. Do not edit;',
    '// run `pnpm schemas:generate`. A test fails when this file and the generator disagree.',
    '/* eslint-disable */',
    "import { z } from 'zod'",
    helpers.length > 0 ? `import { ${helpers.join(', ')} } from '../runtime.js'` : '',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n')
  return { code: text, names }
}

function docComment(node: Record<string, Json>, ref: NodeRef): string {
  const title = typeof node.title === 'string' ? node.title : undefined
  const description = typeof node.description === 'string' ? node.description : ''
  const firstSentence = description.split(/(?<=\.)\s/)[0]?.slice(0, 300) ?? ''
  const lines = [
    title,
    firstSentence,
    `AdCP ${VERSION} \`${ref.file}${ref.pointer ? `#${ref.pointer}` : ''}\``,
  ]
    .filter((line): line is string => Boolean(line))
    .map((line) => ` * ${line.replace(/\*\//g, '*\\/')}`)
  return `/**\n${lines.join('\n *\n')}\n */`
}

const literal = (value: Json) => JSON.stringify(value)
const regexLiteral = (pattern: string) => {
  try {
    new RegExp(pattern, 'u')
    return `new RegExp(${literal(pattern)}, 'u')`
  } catch {
    // A pattern that is not valid in Unicode mode is compiled without the flag, as ECMA-262 allows.
    return `new RegExp(${literal(pattern)})`
  }
}

/**
 * A zod expression and its exact static type. Every exported schema is annotated with its type, so that
 * declaration files name other schemas (`typeof FormatIdSchema`) instead of expanding them.
 */
interface Code {
  readonly value: string
  readonly type: string
  /** The schema can reject an object for an unknown top-level key (a strict object, or built from one). */
  readonly strict?: boolean
  /**
   * Required properties whose literal values zod can read off the schema (`_zod.propValues`): a
   * `z.discriminatedUnion` option must have its discriminator among them.
   */
  readonly tags?: ReadonlySet<string>
}
const code = (value: string, type: string, strict = false, tags?: ReadonlySet<string>): Code => ({
  value,
  type,
  strict,
  ...(tags && tags.size > 0 ? { tags } : {}),
})
const UNKNOWN = code('z.unknown()', 'z.ZodUnknown')

class Emitter {
  readonly helpers = new Set<string>()
  /** Names of the emitted schemas that are strict at the top level (see {@link Code.strict}). */
  readonly strictNames = new Set<string>()
  /** The {@link Code.tags} of the emitted schemas, by export name. */
  readonly tagsByName = new Map<string, ReadonlySet<string>>()
  constructor(
    private readonly refName: (value: string, from: NodeRef) => string,
    private readonly resolveRef: (value: string, from: NodeRef) => { node: SchemaNode; ref: NodeRef },
  ) {}

  private use(helper: string): string {
    this.helpers.add(helper)
    return helper
  }

  /** True when the schema accepts every value (only annotations). */
  static acceptsAnything(node: SchemaNode): boolean {
    return (
      node === true || (typeof node === 'object' && Object.keys(node).every((key) => ANNOTATIONS.has(key)))
    )
  }

  /** A helper that returns the schema it refines: the type does not change. */
  private refine(helper: string, target: Code, ...args: string[]): Code {
    return code(
      `${this.use(helper)}(${[target.value, ...args].join(', ')})`,
      target.type,
      target.strict,
      target.tags,
    )
  }

  emit(node: SchemaNode, from: NodeRef, indent: string): Code {
    if (node === true || Emitter.acceptsAnything(node)) return UNKNOWN
    if (node === false) return code('z.never()', 'z.ZodNever')
    if (typeof node.$ref === 'string') {
      const name = `${this.refName(node.$ref, from)}Schema`
      let result = code(name, `typeof ${name}`, this.strictNames.has(name), this.tagsByName.get(name))
      // Draft-07 ignores $ref siblings, but Ajv applies them and the authors mean them to apply.
      const siblings = Object.fromEntries(Object.entries(node).filter(([key]) => key !== '$ref'))
      if (!Emitter.acceptsAnything(siblings))
        result = this.intersection(result, this.emit(siblings, from, indent))
      return result
    }
    const inner = indent + '  '
    let result = this.base(node, from, indent)
    const combine = (next: Code) => (result = result ? this.intersection(result, next) : next)
    if (Array.isArray(node.allOf)) {
      for (const part of node.allOf) combine(this.emit(part as SchemaNode, from, indent))
    }
    for (const [keyword, exclusive] of [
      ['anyOf', false],
      ['oneOf', true],
    ] as const) {
      const options = node[keyword]
      if (!Array.isArray(options)) continue
      const union = this.union(options as SchemaNode[], from, inner, indent, exclusive)
      // `type: "object"` and nothing else beside the union: a discriminated union only accepts objects already.
      if (result?.value === 'z.looseObject({})' && union.value.startsWith('z.discriminatedUnion('))
        result = union
      else combine(union)
    }
    let done: Code = result ?? UNKNOWN
    if (node.not !== undefined) {
      const excluded = node.not as SchemaNode
      done = this.refine('not', done, this.emit(excluded, from, inner).value, literal(notMessage(excluded)))
    }
    if (node.if !== undefined) {
      const branch = (key: 'then' | 'else') =>
        node[key] === undefined ? 'undefined' : this.emit(node[key] as SchemaNode, from, inner).value
      done = code(
        `${this.use('conditional')}(\n${inner}${done.value},\n${inner}${this.emit(node.if as SchemaNode, from, inner).value},\n${inner}${branch('then')},\n${inner}${branch('else')},\n${indent})`,
        done.type,
        done.strict,
        done.tags,
      )
    }
    return done
  }

  private intersection(left: Code, right: Code): Code {
    const type = `z.ZodIntersection<${left.type}, ${right.type}>`
    // zod's intersection forgives an unknown key that only one side rejects; JSON Schema's allOf does not.
    if (left.strict || right.strict)
      return code(`${this.use('allOf')}(${left.value}, ${right.value})`, type, true)
    return code(`z.intersection(${left.value}, ${right.value})`, type)
  }

  private union(
    options: SchemaNode[],
    from: NodeRef,
    inner: string,
    indent: string,
    exclusive: boolean,
  ): Code {
    const emitted = options.map((option) => this.emit(option, from, inner))
    if (emitted.length === 1) return emitted[0]!
    const strict = emitted.some((option) => option.strict)
    // Alternatives that a required const property tells apart can never both match, so `oneOf` and `anyOf`
    // mean the same, and zod picks the one alternative by that property instead of trying each in turn.
    const discriminator = this.discriminator(options, from)
    if (discriminator) {
      const tagged = emitted.map((option, index) =>
        option.tags?.has(discriminator.key)
          ? option
          : this.tag(option, discriminator.key, discriminator.values[index]!),
      )
      const values = `[\n${tagged.map((option) => `${inner}${option.value},`).join('\n')}\n${indent}]`
      const common = [...tagged[0]!.tags!].filter((key) => tagged.every((option) => option.tags!.has(key)))
      return code(
        `z.discriminatedUnion(${literal(discriminator.key)}, ${values})`,
        `z.ZodDiscriminatedUnion<[${tagged.map((option) => option.type).join(', ')}], ${literal(discriminator.key)}>`,
        strict,
        new Set(common),
      )
    }
    const values = `[\n${emitted.map((option) => `${inner}${option.value},`).join('\n')}\n${indent}]`
    const type = `z.ZodUnion<readonly [${emitted.map((option) => option.type).join(', ')}]>`
    // Alternatives of disjoint JSON types (an asset or a list of assets) can never both match either.
    if (!exclusive || this.disjointTypes(options, from)) return code(`z.union(${values})`, type, strict)
    return code(`${this.use('oneOf')}(${values})`, type, strict)
  }

  /**
   * An alternative whose discriminator zod cannot read (an intersection, say) behind an object holding only the
   * discriminator: the pipe exposes the value to `z.discriminatedUnion` and hands the input on unchanged.
   */
  private tag(option: Code, key: string, value: Json): Code {
    const constant = this.constant(value)
    return code(
      `z.looseObject({ ${literal(key)}: ${constant.value} }).pipe(${option.value})`,
      `z.ZodPipe<z.ZodObject<{ ${literal(key)}: ${constant.type} }, z.core.$loose>, ${option.type}>`,
      option.strict,
      new Set([key]),
    )
  }

  /**
   * The property that tells the alternatives apart, when there is one: every alternative (after following
   * `$ref`s, and looking into its `allOf` parts) requires it and gives it a scalar `const` that no other
   * alternative gives it. Undefined otherwise.
   */
  private discriminator(options: SchemaNode[], from: NodeRef): { key: string; values: Json[] } | undefined {
    const facts = options.map((option) => this.constants(option, from))
    const [first, ...rest] = facts
    if (!first) return undefined
    for (const [key, value] of first.constants) {
      if (!first.required.has(key)) continue
      const values = [
        value,
        ...rest.map((fact) => (fact.required.has(key) ? fact.constants.get(key) : undefined)),
      ]
      if (values.some((item) => item === undefined)) continue
      if (new Set(values.map((item) => JSON.stringify(item))).size === values.length) {
        return { key, values: values as Json[] }
      }
    }
    return undefined
  }

  /** True when each alternative names its JSON `type`s and no two alternatives share one. */
  private disjointTypes(options: SchemaNode[], from: NodeRef): boolean {
    const seen = new Set<string>()
    for (const option of options) {
      const types = this.jsonTypes(option, from)
      if (!types) return false
      for (const type of types) {
        if (seen.has(type)) return false
        seen.add(type)
      }
    }
    return true
  }

  /** The JSON types a schema's `type` allows (through `$ref`; integer counts as number); undefined if any. */
  private jsonTypes(node: SchemaNode, from: NodeRef, depth = 0): Set<string> | undefined {
    if (typeof node !== 'object' || depth > 8) return undefined
    if (typeof node.$ref === 'string') {
      const target = this.resolveRef(node.$ref, from)
      return this.jsonTypes(target.node, target.ref, depth + 1)
    }
    const type = node.type
    const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type.map(String) : undefined
    return types && new Set(types.map((name) => (name === 'integer' ? 'number' : name)))
  }

  /** The required names and the scalar `const` properties of an object schema, through `$ref` and `allOf`. */
  private constants(
    node: SchemaNode,
    from: NodeRef,
    depth = 0,
  ): { required: Set<string>; constants: Map<string, Json> } {
    const out = { required: new Set<string>(), constants: new Map<string, Json>() }
    if (typeof node !== 'object' || depth > 8) return out
    const merge = (part: { required: Set<string>; constants: Map<string, Json> }) => {
      for (const key of part.required) out.required.add(key)
      for (const [key, value] of part.constants) if (!out.constants.has(key)) out.constants.set(key, value)
    }
    if (typeof node.$ref === 'string') {
      const target = this.resolveRef(node.$ref, from)
      merge(this.constants(target.node, target.ref, depth + 1))
    }
    if (Array.isArray(node.required)) for (const key of node.required) out.required.add(String(key))
    const properties = node.properties
    if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [key, property] of Object.entries(properties)) {
        if (!property || typeof property !== 'object' || Array.isArray(property)) continue
        const value = property.const
        if (value === null || ['string', 'number', 'boolean'].includes(typeof value))
          out.constants.set(key, value!)
      }
    }
    if (Array.isArray(node.allOf)) {
      for (const part of node.allOf) merge(this.constants(part as SchemaNode, from, depth + 1))
    }
    return out
  }

  /** The part of a schema given by type, enum and const, with its own keywords; undefined when it has none. */
  private base(node: Record<string, Json>, from: NodeRef, indent: string): Code | undefined {
    if (node.const !== undefined) return this.constant(node.const)
    if (Array.isArray(node.enum)) {
      const values = node.enum
      if (values.length > 1 && values.every((value) => typeof value === 'string')) {
        const members = [...new Set(values as string[])].map(
          (value) => `${literal(value)}: ${literal(value)}`,
        )
        return code(`z.enum(${literal(values)})`, `z.ZodEnum<{ ${members.join('; ')} }>`)
      }
      const members = values.map((value) => this.constant(value))
      return members.length === 1 ? members[0]! : unionOf(members)
    }
    const types = Array.isArray(node.type)
      ? (node.type as string[])
      : typeof node.type === 'string'
        ? [node.type]
        : []
    if (types.length === 0) {
      if (
        node.properties ||
        node.required ||
        node.additionalProperties !== undefined ||
        node.patternProperties
      ) {
        return this.object(node, from, indent)
      }
      // Keywords of another type, with no `type` named, bind only values of that type.
      const parts: Code[] = []
      const has = (keys: string[]) => keys.some((key) => node[key] !== undefined)
      if (has(['items', 'minItems', 'maxItems', 'uniqueItems', 'contains'])) {
        parts.push(
          code(`${this.use('ifType')}('array', ${this.array(node, from, indent).value})`, 'z.ZodUnknown'),
        )
      }
      if (has(['minLength', 'maxLength', 'pattern', 'format'])) {
        parts.push(code(`${this.use('ifType')}('string', ${this.string(node).value})`, 'z.ZodUnknown'))
      }
      if (has(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'])) {
        const number = this.number(code('z.number()', 'z.ZodNumber'), node)
        parts.push(code(`${this.use('ifType')}('number', ${number.value})`, 'z.ZodUnknown'))
      }
      return parts.reduce<Code | undefined>(
        (all, part) => (all ? this.intersection(all, part) : part),
        undefined,
      )
    }
    const nullable = types.includes('null') && types.length > 1
    const members = types
      .filter((type) => !(nullable && type === 'null'))
      .map((type) => this.typed(type, node, from, indent))
    const result = members.length === 1 ? members[0]! : unionOf(members)
    return nullable ? code(`${result.value}.nullable()`, `z.ZodNullable<${result.type}>`) : result
  }

  private constant(value: Json): Code {
    if (value !== null && typeof value === 'object') {
      return code(
        `${this.use('jsonConstant')}(${literal(value)})`,
        `z.ZodCustom<${literal(value)}, ${literal(value)}>`,
      )
    }
    return code(`z.literal(${literal(value)})`, `z.ZodLiteral<${literal(value)}>`)
  }

  private typed(type: string, node: Record<string, Json>, from: NodeRef, indent: string): Code {
    switch (type) {
      case 'string':
        return this.string(node)
      case 'integer':
        return this.number(code('z.int()', 'z.ZodInt'), node)
      case 'number':
        return this.number(code('z.number()', 'z.ZodNumber'), node)
      case 'boolean':
        return code('z.boolean()', 'z.ZodBoolean')
      case 'null':
        return code('z.null()', 'z.ZodNull')
      case 'object':
        return this.object(node, from, indent)
      case 'array':
        return this.array(node, from, indent)
      default:
        throw new Error(`unknown type ${type}`)
    }
  }

  private string(node: Record<string, Json>): Code {
    const format = typeof node.format === 'string' ? node.format : undefined
    let result: Code
    switch (format) {
      case 'date-time':
        result = code('z.iso.datetime({ offset: true })', 'z.ZodISODateTime')
        break
      case 'date':
        result = code('z.iso.date()', 'z.ZodISODate')
        break
      case 'email':
        result = code('z.email()', 'z.ZodEmail')
        break
      case 'uuid':
        result = code('z.guid()', 'z.ZodGUID')
        break
      case 'hostname':
        result = code('z.hostname()', 'z.ZodCustomStringFormat<"hostname">')
        break
      case 'uri':
        result = code(`${this.use('uri')}()`, 'z.ZodString')
        break
      default:
        if (format !== undefined && !UNCHECKED_FORMATS.has(format))
          throw new Error(`unknown string format ${format}`)
        result = code('z.string()', 'z.ZodString')
    }
    let value = result.value
    if (typeof node.minLength === 'number') value += `.min(${node.minLength})`
    if (typeof node.maxLength === 'number') value += `.max(${node.maxLength})`
    if (typeof node.pattern === 'string') value += `.regex(${regexLiteral(node.pattern)})`
    return code(value, result.type)
  }

  private number(start: Code, node: Record<string, Json>): Code {
    let value = start.value
    if (typeof node.minimum === 'number') value += `.gte(${node.minimum})`
    if (typeof node.maximum === 'number') value += `.lte(${node.maximum})`
    if (typeof node.exclusiveMinimum === 'number') value += `.gt(${node.exclusiveMinimum})`
    if (typeof node.exclusiveMaximum === 'number') value += `.lt(${node.exclusiveMaximum})`
    if (typeof node.multipleOf === 'number') value += `.multipleOf(${node.multipleOf})`
    return code(value, start.type)
  }

  private object(node: Record<string, Json>, from: NodeRef, indent: string): Code {
    const inner = indent + '  '
    const properties = (node.properties ?? {}) as Record<string, SchemaNode>
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : [])
    const unenforced: string[] = [] // required names that zod would let through when missing
    const tags = new Set<string>() // required names with literal values (see Code.tags)
    const values: string[] = []
    const types: string[] = []
    for (const [key, schema] of Object.entries(properties)) {
      const property = this.emit(schema, from, inner)
      if (required.has(key) && property.type === 'z.ZodUnknown') unenforced.push(key)
      if (required.has(key) && /^z\.Zod(Literal|Enum)</.test(property.type)) tags.add(key)
      const optional = required.has(key) ? '' : '.optional()'
      values.push(`${inner}${literal(key)}: ${property.value}${optional},`)
      types.push(
        `${inner}${literal(key)}: ${required.has(key) ? property.type : `z.ZodOptional<${property.type}>`}`,
      )
    }
    for (const key of required) if (!(key in properties)) unenforced.push(key)
    const valueBody = values.length > 0 ? `{\n${values.join('\n')}\n${indent}}` : '{}'
    const typeBody = types.length > 0 ? `{\n${types.join(';\n')}\n${indent}}` : '{}'
    const additional = node.additionalProperties as SchemaNode | undefined
    const patterns = node.patternProperties as Record<string, SchemaNode> | undefined
    let result: Code
    if (additional === false && !patterns) {
      result = code(`z.strictObject(${valueBody})`, `z.ZodObject<${typeBody}, z.core.$strict>`, true, tags)
    } else if (additional === undefined || additional === false || Emitter.acceptsAnything(additional)) {
      result = code(`z.looseObject(${valueBody})`, `z.ZodObject<${typeBody}, z.core.$loose>`, false, tags)
    } else {
      const rest = this.emit(additional, from, inner)
      result = code(
        `z.object(${valueBody}).catchall(${rest.value})`,
        `z.ZodObject<${typeBody}, z.core.$catchall<${rest.type}>>`,
        false,
        tags,
      )
    }

    const rules: string[] = []
    if (patterns) {
      const entries = Object.entries(patterns).map(
        ([pattern, schema]) => `[${regexLiteral(pattern)}, ${this.emit(schema, from, inner + '  ').value}]`,
      )
      rules.push(`${inner}patternProperties: [${entries.join(', ')}],`)
      if (additional === false) {
        rules.push(
          `${inner}closed: { names: ${literal(Object.keys(properties))}, patterns: [${Object.keys(patterns).map(regexLiteral).join(', ')}] },`,
        )
      }
    }
    if (node.propertyNames !== undefined) {
      rules.push(`${inner}propertyNames: ${this.emit(node.propertyNames as SchemaNode, from, inner).value},`)
    }
    if (typeof node.minProperties === 'number') rules.push(`${inner}minProperties: ${node.minProperties},`)
    if (typeof node.maxProperties === 'number') rules.push(`${inner}maxProperties: ${node.maxProperties},`)
    if (node.dependencies && typeof node.dependencies === 'object') {
      const entries = Object.entries(node.dependencies as Record<string, Json>).map(([key, value]) =>
        Array.isArray(value)
          ? `${literal(key)}: ${literal(value)}`
          : `${literal(key)}: ${this.emit(value as SchemaNode, from, inner + '  ').value}`,
      )
      rules.push(`${inner}dependencies: { ${entries.join(', ')} },`)
    }
    if (rules.length > 0) result = this.refine('objectRules', result, `{\n${rules.join('\n')}\n${indent}}`)
    if (unenforced.length > 0) result = this.refine('requireKeys', result, literal(unenforced))
    return result
  }

  private array(node: Record<string, Json>, from: NodeRef, indent: string): Code {
    let result: Code
    if (Array.isArray(node.items)) {
      const items = node.items.map((item) => this.emit(item as SchemaNode, from, indent))
      const list = `[${items.map((item) => item.value).join(', ')}]`
      const typeList = `[${items.map((item) => item.type).join(', ')}]`
      const rest = node.additionalItems as SchemaNode | undefined
      if (rest === false) result = code(`z.tuple(${list})`, `z.ZodTuple<${typeList}, null>`)
      else {
        const restCode = rest === undefined ? UNKNOWN : this.emit(rest, from, indent)
        result = code(`z.tuple(${list}, ${restCode.value})`, `z.ZodTuple<${typeList}, ${restCode.type}>`)
      }
    } else {
      const item = node.items === undefined ? UNKNOWN : this.emit(node.items as SchemaNode, from, indent)
      result = code(`z.array(${item.value})`, `z.ZodArray<${item.type}>`)
    }
    let value = result.value
    if (typeof node.minItems === 'number') value += `.min(${node.minItems})`
    if (typeof node.maxItems === 'number') value += `.max(${node.maxItems})`
    result = code(value, result.type)
    if (node.uniqueItems === true) result = this.refine('uniqueItems', result)
    if (node.contains !== undefined) {
      result = this.refine('contains', result, this.emit(node.contains as SchemaNode, from, indent).value)
    }
    return result
  }
}

function unionOf(members: Code[]): Code {
  return code(
    `z.union([${members.map((member) => member.value).join(', ')}])`,
    `z.ZodUnion<readonly [${members.map((member) => member.type).join(', ')}]>`,
  )
}

function notMessage(excluded: SchemaNode): string {
  if (typeof excluded === 'object') {
    const keys = Object.keys(excluded).filter((key) => !ANNOTATIONS.has(key))
    if (keys.length === 1 && Array.isArray(excluded.required)) {
      return `must not have ${excluded.required.map((key) => `"${String(key)}"`).join(' and ')}`
    }
    if (keys.length === 1 && Array.isArray(excluded.anyOf)) {
      const names = excluded.anyOf.flatMap((option) =>
        option && typeof option === 'object' && !Array.isArray(option) && Array.isArray(option.required)
          ? option.required.map(String)
          : [],
      )
      if (names.length === excluded.anyOf.length)
        return `must not have any of ${names.map((name) => `"${name}"`).join(', ')}`
    }
  }
  const text = JSON.stringify(excluded)
  return `must not match ${text.length > 160 ? `${text.slice(0, 157)}...` : text}`
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const code = generate()
  if (process.argv.includes('--check')) {
    const current = readFileSync(OUTPUT_FILE, 'utf8')
    if (current !== code) {
      console.error('src/generated/schemas.ts is out of date: run `pnpm schemas:generate`')
      process.exit(1)
    }
    console.log('src/generated/schemas.ts is up to date')
  } else {
    writeFileSync(OUTPUT_FILE, code)
    console.log(`wrote ${path.relative(process.cwd(), OUTPUT_FILE)} (${code.length} bytes)`)
  }
}
