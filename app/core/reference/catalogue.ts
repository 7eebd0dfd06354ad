import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { VineValidator } from '@vinejs/vine'
import type { OperationClass } from '#core/rpc/base_operation'
import type { ErrorCode } from '#core/rpc/errors'
import type { SocketHandlerClass, SystemMessageHandlerClass } from '#core/socket/socket_handler'
import type { MessageDoc, OperationDoc, PathItem, PluginReference } from './types.js'
import { toJsonSchema, type JsonSchema } from './vine_json_schema.js'

/** One operation as the reference and the MCP tools see it: the class, its schema, its doc. */
export interface OperationEntry {
  name: string
  pluginId: string
  Operation: OperationClass
  /** The JSON Schema of its parameters (from its VineJS validator). */
  params: JsonSchema
  /** Undefined when the plugin wrote none (the coverage test fails then). */
  doc?: OperationDoc
  /** Every nok code it may answer: its own, and those of its auth mode, validation, writes, files. */
  errors: ErrorCode[]
}

/** One client-to-server socket message: a type, or a system message (type 11) by `msg`. */
export interface SocketEntry {
  key: string
  pluginId: string
  type: number
  msg?: string
  /** Payload schema besides the envelope (type, credentials), from the handler's validator. */
  params: JsonSchema
  writes: boolean
  area?: string
  /** The handler's compiled schema (the frame's fields besides the envelope). */
  validator: VineValidator<any, any>
  doc?: MessageDoc
  errors: ErrorCode[]
}

export interface Catalogue {
  operations: OperationEntry[]
  socket: SocketEntry[]
  /** Documented frames outside the registry: server-to-client, and gateway client frames. */
  serverMessages: (MessageDoc & { key: string; type: number; pluginId: string })[]
  gatewayMessages: (MessageDoc & { key: string; type: number; pluginId: string })[]
  paths: Record<string, PathItem>
  /** Documented names the registry does not have (a typo or a removed operation). */
  strays: string[]
}

const SESSION_CODES: ErrorCode[] = [
  'MISSING_PARAMETER',
  'INVALID_SESSKEY',
  'SESSION_EXPIRED',
  'USER_MISMATCH',
  'ON_BEHALF_DENIED',
  'UNKNOWN_USER',
  'RESTRICTED_SESSION',
]

/** The nok codes an entry point answers besides its own (the kernel's steps before handle()). */
export function derivedErrors(
  own: ErrorCode[],
  declared: { auth?: string; validator: boolean; writes: boolean; files?: boolean }
): ErrorCode[] {
  const codes = new Set<ErrorCode>(own)
  if (declared.validator) codes.add('MISSING_PARAMETER').add('INVALID_PARAMETER')
  const auth = declared.auth ?? 'session'
  if (auth.startsWith('session')) SESSION_CODES.forEach((code) => codes.add(code))
  if (auth === 'gateway' || auth === 'session_or_gateway')
    ['INVALID_SESSKEY', 'USER_MISMATCH', 'RATE_LIMITED'].forEach((c) => codes.add(c as ErrorCode))
  if (declared.writes && auth !== 'none' && auth !== 'gateway') codes.add('READONLY_SESSION')
  if (declared.files) codes.add('PAYLOAD_TOO_LARGE')
  codes.add('DEADLOCK').add('INTERNAL_ERROR')
  return [...codes]
}

/**
 * Reads the registry: every enabled plugin's operations and socket handlers
 * (their classes are loaded: the validators are the source of the schemas)
 * and the docs its `reference` holds. Built once per process (ReferenceService).
 */
export async function buildCatalogue(registry: PluginRegistry): Promise<Catalogue> {
  const references = new Map<string, PluginReference>()
  for (const plugin of registry.plugins) {
    if (!plugin.reference) continue
    const { default: reference } = await plugin.reference()
    references.set(plugin.id, reference)
  }
  const used = new Set<string>()
  const catalogue: Catalogue = {
    operations: [],
    socket: [],
    serverMessages: [],
    gatewayMessages: [],
    paths: {},
    strays: [],
  }

  for (const [name, claim] of registry.operations) {
    const { default: Operation } = await claim.load()
    const doc = references.get(claim.pluginId)?.operations?.[name]
    used.add(`${claim.pluginId}:op:${name}`)
    catalogue.operations.push({
      name,
      pluginId: claim.pluginId,
      Operation,
      params: toJsonSchema(Operation.validator),
      doc,
      errors: derivedErrors(doc?.errors ?? [], {
        auth: Operation.auth,
        validator: Boolean(Operation.validator),
        writes: Operation.writes,
        files: Boolean(Operation.files),
      }),
    })
  }
  for (const [type, claim] of registry.socketTypes) {
    const { default: Handler } = (await claim.load()) as { default: SocketHandlerClass }
    const doc = references.get(claim.pluginId)?.socket?.[type]
    used.add(`${claim.pluginId}:socket:${type}`)
    catalogue.socket.push({
      key: `type${type}`,
      pluginId: claim.pluginId,
      type,
      params: toJsonSchema(Handler.validator),
      validator: Handler.validator,
      writes: Handler.writes,
      area: Handler.area,
      doc,
      errors: derivedErrors(doc?.errors ?? [], { validator: true, writes: Handler.writes }),
    })
  }
  for (const [msg, claim] of registry.systemMessages) {
    const { default: Handler } = (await claim.load()) as { default: SystemMessageHandlerClass }
    const doc = references.get(claim.pluginId)?.systemMessages?.[msg]
    used.add(`${claim.pluginId}:system:${msg}`)
    catalogue.socket.push({
      key: `system_${msg}`,
      pluginId: claim.pluginId,
      type: 11,
      msg,
      params: toJsonSchema(Handler.validator),
      validator: Handler.validator,
      writes: Handler.writes,
      area: Handler.area,
      doc,
      errors: derivedErrors(doc?.errors ?? [], { validator: true, writes: Handler.writes }),
    })
  }

  for (const [pluginId, reference] of references) {
    for (const [key, doc] of Object.entries(reference.serverMessages ?? {})) {
      catalogue.serverMessages.push({ ...doc, key, pluginId })
    }
    for (const [type, doc] of Object.entries(reference.gatewayMessages ?? {})) {
      catalogue.gatewayMessages.push({
        ...doc,
        key: `gateway${type}`,
        type: Number(type),
        pluginId,
      })
    }
    Object.assign(catalogue.paths, reference.paths ?? {})
    const documented = [
      ...Object.keys(reference.operations ?? {}).map((name) => `${pluginId}:op:${name}`),
      ...Object.keys(reference.socket ?? {}).map((type) => `${pluginId}:socket:${type}`),
      ...Object.keys(reference.systemMessages ?? {}).map((msg) => `${pluginId}:system:${msg}`),
    ]
    catalogue.strays.push(...documented.filter((key) => !used.has(key)))
  }
  return catalogue
}

/**
 * What the reference lacks: an operation or client socket message without a
 * summary, a description, an example or its own nok codes, and documented
 * names the registry does not have. Empty when everything is covered.
 */
export function missingDocs(catalogue: Catalogue): string[] {
  const missing: string[] = []
  const check = (what: string, doc: OperationDoc | MessageDoc | undefined) => {
    if (!doc) return missing.push(`${what}: no entry in its plugin's reference`)
    if (!doc.summary?.trim()) missing.push(`${what}: no summary`)
    if (!doc.description?.trim()) missing.push(`${what}: no description`)
    if (!doc.example || typeof doc.example !== 'object') missing.push(`${what}: no example`)
    if (!Array.isArray(doc.errors) || doc.errors.length === 0) missing.push(`${what}: no nok codes`)
  }
  for (const entry of catalogue.operations) check(`operation ${entry.name}`, entry.doc)
  for (const entry of catalogue.socket) check(`socket message ${entry.key}`, entry.doc)
  for (const doc of [...catalogue.serverMessages, ...catalogue.gatewayMessages]) {
    if (!doc.summary?.trim() || !doc.description?.trim() || !doc.example) {
      missing.push(`socket message ${doc.key}: no summary, description or example`)
    }
  }
  missing.push(...catalogue.strays.map((key) => `${key}: documented but not registered`))
  return missing
}
