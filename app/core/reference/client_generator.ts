import { ERROR_CATALOGUE } from '#core/rpc/errors'
import type { Catalogue, OperationEntry, SocketEntry } from './catalogue.js'
import type { JsonSchema } from './vine_json_schema.js'

/**
 * The typed client's generated part (resources/client/generated.ts), written
 * from the same catalogue as /live/openapi.json: one method per operation with
 * its parameter and answer types, and the socket frames' payload types. The
 * hand-written runtime (transport, key flow, socket, uploads) lives next to it.
 * tests/unit/reference/client_generator.spec.ts fails when the committed file
 * differs from what this produces (`node ace client:generate` rewrites it).
 */
export const GENERATED_CLIENT_FILE = 'resources/client/generated.ts'

/** Names the runtime's own methods use: an operation may not take one. */
export const RESERVED_NAMES = new Set([
  'call',
  'send',
  'invoke',
  'login',
  'logout',
  'useSession',
  'useOauthkey',
  'openSession',
  'credentials',
  'socket',
  'tusUpload',
  'constructor',
])

const CREDENTIALS = ['o_u', 'u_c', 'sesskey', 'version']

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

const pascal = (name: string) =>
  name
    .split(/[^A-Za-z0-9$]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name))

/** A doc comment body: `*\/` never closes it early. */
function comment(lines: (string | undefined)[], indent: string): string {
  const kept = lines
    .filter((line): line is string => Boolean(line && line.trim()))
    .flatMap((line) => line.replace(/\*\//g, '*\\/').split('\n'))
  if (kept.length === 0) return ''
  if (kept.length === 1) return `${indent}/** ${kept[0]} */\n`
  return `${indent}/**\n${kept.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`
}

/** The TypeScript type of a JSON Schema (as vine_json_schema.ts writes them). */
export function tsType(schema: JsonSchema, indent = ''): string {
  if (!schema || typeof schema !== 'object') return 'unknown'
  if (Array.isArray(schema.enum))
    return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ')
  if (Array.isArray(schema.anyOf)) {
    const union = [...new Set(schema.anyOf.map((s: JsonSchema) => tsType(s, indent)))]
    return union.length ? union.join(' | ') : 'unknown'
  }
  const types: string[] = Array.isArray(schema.type)
    ? schema.type
    : schema.type
      ? [schema.type]
      : []
  if (types.length === 0) return 'unknown'
  return types.map((type) => baseType(type, schema, indent)).join(' | ')
}

function baseType(type: string, schema: JsonSchema, indent: string): string {
  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array':
      if (Array.isArray(schema.prefixItems)) {
        return `[${schema.prefixItems.map((s: JsonSchema) => tsType(s, indent)).join(', ')}]`
      }
      return `Array<${schema.items ? tsType(schema.items, indent) : 'unknown'}>`
    case 'object': {
      const properties = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)
      if (properties.length === 0) {
        const values =
          schema.additionalProperties && typeof schema.additionalProperties === 'object'
            ? tsType(schema.additionalProperties, indent)
            : 'unknown'
        return `Record<string, ${values}>`
      }
      return `{\n${members(schema, indent + '  ')}${indent}}`
    }
    default:
      return 'unknown'
  }
}

/** The members of an object schema, one a line, with their limits as comments. */
function members(schema: JsonSchema, indent: string, optional: Set<string> = new Set()): string {
  const required = new Set<string>(schema.required ?? [])
  let text = ''
  for (const [name, property] of Object.entries(
    (schema.properties ?? {}) as Record<string, JsonSchema>
  )) {
    text += comment([property.description, limitsOf(property)], indent)
    const mark = required.has(name) && !optional.has(name) ? '' : '?'
    text += `${indent}${key(name)}${mark}: ${tsType(property, indent)}\n`
  }
  if (schema.additionalProperties === true) {
    text += `${indent}[extra: string]: unknown\n`
  }
  return text
}

function limitsOf(schema: JsonSchema): string | undefined {
  const parts: string[] = []
  const pairs: [string, string][] = [
    ['minLength', 'min length'],
    ['maxLength', 'max length'],
    ['minimum', 'min'],
    ['maximum', 'max'],
    ['minItems', 'min items'],
    ['maxItems', 'max items'],
    ['pattern', 'pattern'],
    ['format', 'format'],
  ]
  for (const [field, label] of pairs) {
    const value = schema[field]
    if (value === Number.MAX_SAFE_INTEGER || value === -Number.MAX_SAFE_INTEGER) continue
    if (value !== undefined) parts.push(`${label} ${value}`)
  }
  return parts.length ? parts.join(', ') : undefined
}

/** True when a call may omit its parameters object (nothing required besides credentials). */
function paramsOptional(entry: OperationEntry): boolean {
  const required: string[] = entry.params.required ?? []
  return required.every((name) => entry.Operation.auth !== 'none' && CREDENTIALS.includes(name))
}

function operationBlock(entry: OperationEntry): string {
  const { name, Operation, doc } = entry
  const type = pascal(name)
  // The client adds the credentials it holds to every call but those of auth 'none'.
  const optional = new Set(Operation.auth === 'none' ? [] : CREDENTIALS)
  let text = comment(
    [`Parameters of ${name} (besides req and the credentials the client holds).`],
    ''
  )
  text += `export interface ${type}Params {\n${members(entry.params, '  ', optional)}}\n\n`
  text += comment([`The ok answer of ${name}.`], '')
  text += `export interface ${type}Answer extends OkAnswer {\n`
  for (const [field, meaning] of Object.entries(doc?.returns ?? {})) {
    text += comment([meaning], '  ')
    text += `  ${key(field)}: any\n`
  }
  text += `}\n\n`
  return text
}

function methodBlock(entry: OperationEntry): string {
  const { name, Operation, doc } = entry
  const type = pascal(name)
  const params = paramsOptional(entry) ? `params: ${type}Params = {}` : `params: ${type}Params`
  const file = Operation.files ? ', file?: UploadFile' : ''
  let text = comment(
    [
      doc?.summary,
      doc?.description,
      `auth ${Operation.auth}${Operation.area ? `, area ${Operation.area}` : ''}${Operation.writes ? ', writes' : ''}${Operation.files ? ', file part qqfile' : ''}`,
      `@throws QuireError (nok) with errorCode ${entry.errors.join(', ')}`,
    ],
    '  '
  )
  text += `  ${name}(${params}${file}, options?: CallOptions): Promise<${type}Answer> {\n`
  text += `    return this.invoke<${type}Answer>('${name}', OPERATIONS.${name}, params, options${Operation.files ? ', file' : ''})\n`
  text += `  }\n\n`
  return text
}

function socketName(entry: SocketEntry): string {
  return entry.msg ? `system_${entry.msg}` : entry.key
}

function socketBlock(entry: SocketEntry): string {
  const type = `${pascal(socketName(entry))}Frame`
  // The socket adds the credentials it holds to every frame, and type (and msg).
  const schema = { ...entry.params, properties: { ...(entry.params.properties ?? {}) } }
  delete schema.properties.type
  if (entry.msg) delete schema.properties.msg
  let text = comment(
    [
      `Socket frame type ${entry.type}${entry.msg ? ` (system message ${entry.msg})` : ''}: ${entry.doc?.summary ?? ''}`,
      entry.doc?.description,
    ],
    ''
  )
  text += `export interface ${type} {\n${members(schema, '  ', new Set(CREDENTIALS))}}\n\n`
  return text
}

/** The text of resources/client/generated.ts for this catalogue (stable order: by name). */
export function generateClient(catalogue: Catalogue): string {
  const operations = [...catalogue.operations].sort((a, b) => a.name.localeCompare(b.name))
  const socket = [...catalogue.socket].sort((a, b) => socketName(a).localeCompare(socketName(b)))
  for (const entry of operations) {
    if (RESERVED_NAMES.has(entry.name) || !IDENTIFIER.test(entry.name)) {
      throw new Error(`Operation ${entry.name} cannot be a client method name`)
    }
  }

  let text = `/*
 * Generated by \`node ace client:generate\` (app/core/reference/client_generator.ts) from the
 * operation registry and its VineJS schemas. Do not edit: run \`npm run build:client\` instead.
 * tests/unit/reference/client_generator.spec.ts fails when this file is out of date.
 */
/* eslint-disable */
import { QuireTransport, type CallOptions, type OkAnswer, type UploadFile } from './runtime.js'

/** Every errorCode a nok may carry (docs/errors.md). */
export type ErrorCode =\n${Object.keys(ERROR_CATALOGUE)
    .map((code) => `  | '${code}'`)
    .join('\n')}

export interface OperationInfo {
  plugin: string
  auth: 'none' | 'session' | 'session_or_gateway' | 'gateway' | 'session_or_public_table'
  writes: boolean
  files: boolean
  area: string | null
  errors: readonly ErrorCode[]
}

/** What each operation is, as the registry declares it. */
export const OPERATIONS = {\n`
  for (const entry of operations) {
    const { Operation } = entry
    const info = {
      plugin: entry.pluginId,
      auth: Operation.auth,
      writes: Boolean(Operation.writes),
      files: Boolean(Operation.files),
      area: Operation.area ?? null,
      errors: entry.errors,
    }
    text += `  ${entry.name}: ${JSON.stringify(info).replace(/"([a-z]+)":/g, '$1: ')},\n`
  }
  text += `} as const satisfies Record<string, OperationInfo>\n\nexport type OperationName = keyof typeof OPERATIONS\n\n`

  for (const entry of operations) text += operationBlock(entry)

  text += `/** Parameters and answer of each operation, by name (for generic code over call()). */
export interface OperationTypes {\n`
  for (const entry of operations) {
    const type = pascal(entry.name)
    text += `  ${entry.name}: { params: ${type}Params; answer: ${type}Answer }\n`
  }
  text += `}\n\n`

  text += `/** One typed method per operation; a nok answer throws QuireError. */
export class QuireOperations extends QuireTransport {\n`
  for (const entry of operations) text += methodBlock(entry)
  text = text.trimEnd() + '\n}\n\n'

  text += `/** Client-to-server socket frames: type (and msg of system messages, type 11). */
export const SOCKET_FRAMES = {\n`
  for (const entry of socket) {
    const info = entry.msg ? { type: entry.type, msg: entry.msg } : { type: entry.type }
    text += `  ${key(socketName(entry))}: ${JSON.stringify(info).replace(/"([a-z]+)":/g, '$1: ')},\n`
  }
  text += `} as const\n\n`
  for (const entry of socket) text += socketBlock(entry)
  text += `/** The payload of each client frame besides type, msg and the credentials, by name. */
export interface SocketFrameTypes {\n`
  for (const entry of socket) {
    const name = socketName(entry)
    text += `  ${key(name)}: ${pascal(name)}Frame\n`
  }
  text += `}\n`
  return text
}

/** The generated text as committed: formatted by the project's prettier settings. */
export async function formatClient(text: string): Promise<string> {
  // prettier is a development tool: loaded only by the generator command and its test.
  const prettier = await import('prettier')
  const options = await prettier.resolveConfig(GENERATED_CLIENT_FILE)
  return prettier.format(text, { ...options, parser: 'typescript' })
}
