import vine from '@vinejs/vine'
import type { VineValidator } from '@vinejs/vine'

/**
 * A JSON Schema (2020-12, as OpenAPI 3.1, AsyncAPI 3 and MCP take it) of a
 * compiled VineJS validator. VineJS 3 has no toJSONSchema(): this walks the
 * compiled tree (`validator.toJSON()`) and recognises each rule by identity,
 * against the rule functions a probe schema of each kind compiles to. A rule it
 * does not know adds nothing (the schema stays true, only less precise).
 */
export type JsonSchema = Record<string, any>

interface CompiledNode {
  type: string
  subtype?: string
  fieldName?: string
  propertyName?: string
  isOptional?: boolean
  allowNull?: boolean
  validations?: { ruleFnId: string }[]
  properties?: CompiledNode[]
  groups?: unknown[]
  each?: CompiledNode
  schema?: CompiledNode
  conditions?: { schema: CompiledNode }[]
  elements?: CompiledNode[]
  allowUnknownProperties?: boolean
}

type Refs = Record<string, any>
type RuleReader = (options: any, schema: JsonSchema) => void

/** The function a probe's last rule compiled to. */
function ruleOf(schema: any): unknown {
  const { schema: root, refs } = vine.compile(vine.object({ probe: schema })).toJSON() as any
  const validations = root.schema.properties[0].validations
  return refs[validations[validations.length - 1].ruleFnId].validator
}

let readers: Map<unknown, RuleReader> | null = null

/** Each known rule's function, with what it adds to the JSON Schema. */
function ruleReaders(): Map<unknown, RuleReader> {
  if (readers) return readers
  const limits = (min: string, max: string): RuleReader => {
    return (options, schema) => {
      if (typeof options?.min === 'number') schema[min] = options.min
      if (typeof options?.max === 'number') schema[max] = options.max
    }
  }
  readers = new Map<unknown, RuleReader>([
    [ruleOf(vine.string().maxLength(1)), (o, s) => (s.maxLength = o.max)],
    [ruleOf(vine.string().minLength(1)), (o, s) => (s.minLength = o.min)],
    [ruleOf(vine.string().fixedLength(1)), (o, s) => (s.minLength = s.maxLength = o.size)],
    [ruleOf(vine.string().email()), (_o, s) => (s.format = 'email')],
    [ruleOf(vine.string().url()), (_o, s) => (s.format = 'uri')],
    [ruleOf(vine.string().uuid()), (_o, s) => (s.format = 'uuid')],
    [
      ruleOf(vine.string().regex(/x/)),
      (o, s) => o?.pattern instanceof RegExp && (s.pattern = o.pattern.source),
    ],
    [ruleOf(vine.string().startsWith('x')), (o, s) => (s.pattern = `^${escape(o.substring)}`)],
    [ruleOf(vine.string().endsWith('x')), (o, s) => (s.pattern = `${escape(o.substring)}$`)],
    [ruleOf(vine.string().in(['x'])), (o, s) => Array.isArray(o?.choices) && (s.enum = o.choices)],
    [ruleOf(vine.number().min(1)), (o, s) => (s.minimum = o.min)],
    [ruleOf(vine.number().max(1)), (o, s) => (s.maximum = o.max)],
    [ruleOf(vine.number().range([1, 2])), limits('minimum', 'maximum')],
    [ruleOf(vine.number().positive()), (_o, s) => (s.minimum = Math.max(s.minimum ?? 0, 0))],
    [ruleOf(vine.number().withoutDecimals()), (_o, s) => (s.type = 'integer')],
    [ruleOf(vine.number().in([1])), (o, s) => Array.isArray(o?.values) && (s.enum = o.values)],
    [ruleOf(vine.array(vine.any()).minLength(1)), (o, s) => (s.minItems = o.min)],
    [ruleOf(vine.array(vine.any()).maxLength(1)), (o, s) => (s.maxItems = o.max)],
    [ruleOf(vine.array(vine.any()).fixedLength(1)), (o, s) => (s.minItems = s.maxItems = o.size)],
    [
      ruleOf(vine.array(vine.any()).notEmpty()),
      (_o, s) => (s.minItems = Math.max(s.minItems ?? 1, 1)),
    ],
    [ruleOf(vine.array(vine.any()).distinct()), (_o, s) => (s.uniqueItems = true)],
    [ruleOf(vine.enum(['x'])), (o, s) => Array.isArray(o?.choices) && (s.enum = [...o.choices])],
  ])
  return readers
}

const escape = (text: unknown) => String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The base schema of a literal subtype, as the wire carries it. */
function literalBase(subtype: string | undefined): JsonSchema {
  switch (subtype) {
    case 'string':
      return { type: 'string' }
    case 'number':
      return { type: 'number' }
    case 'boolean':
    case 'checkbox':
      return {
        type: 'boolean',
        description: 'true/false; as text also 1/0, yes/no, on/off',
      }
    case 'date':
      return { type: 'string', format: 'date' }
    default:
      return {}
  }
}

function nodeSchema(node: CompiledNode, refs: Refs): JsonSchema {
  let schema: JsonSchema
  switch (node.type) {
    case 'root':
      return nodeSchema(node.schema!, refs)
    case 'object':
    case 'sub_object':
      schema = objectSchema(node, refs)
      break
    case 'array':
      schema = { type: 'array', items: nodeSchema(node.each!, refs) }
      break
    case 'record':
      schema = { type: 'object', additionalProperties: nodeSchema(node.each!, refs) }
      break
    case 'tuple':
      schema = { type: 'array', prefixItems: (node.elements ?? []).map((e) => nodeSchema(e, refs)) }
      break
    case 'union':
      schema = { anyOf: (node.conditions ?? []).map((c) => nodeSchema(c.schema, refs)) }
      break
    default:
      schema = literalBase(node.subtype)
  }
  const known = ruleReaders()
  for (const validation of node.validations ?? []) {
    const ref = refs[validation.ruleFnId]
    known.get(ref?.validator)?.(ref?.options, schema)
  }
  if (node.allowNull && typeof schema.type === 'string') schema.type = [schema.type, 'null']
  return schema
}

function objectSchema(node: CompiledNode, refs: Refs): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const property of node.properties ?? []) {
    const name = property.fieldName ?? property.propertyName ?? ''
    properties[name] = nodeSchema(property, refs)
    if (!property.isOptional) required.push(name)
  }
  const schema: JsonSchema = { type: 'object', properties }
  if (required.length > 0) schema.required = required
  // Conditional groups (vine.group) add fields that depend on others: allowed, not listed.
  if (node.allowUnknownProperties || (node.groups?.length ?? 0) > 0) {
    schema.additionalProperties = true
  }
  return schema
}

/** The JSON Schema of a compiled validator's input (an object schema for operations and frames). */
export function toJsonSchema(validator: VineValidator<any, any> | undefined): JsonSchema {
  if (!validator) return { type: 'object', properties: {}, additionalProperties: true }
  const { schema, refs } = validator.toJSON() as unknown as { schema: CompiledNode; refs: Refs }
  return nodeSchema(schema, refs)
}
