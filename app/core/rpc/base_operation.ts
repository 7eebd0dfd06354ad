import type { Logger } from '@adonisjs/core/logger'
import type { VineValidator } from '@vinejs/vine'
import type User from '#models/user'
import type ApiSession from '#models/api_session'
import type { SessionRestrictions } from '#models/api_session'
import type { Params, UploadedFile } from './params.js'
import type { GatewayPrincipal } from '#core/auth/gateway_auth'

/**
 * How an operation is authenticated:
 * - none: anyone (key creation)
 * - session: o_u + sesskey, u_c optional (defaults to o_u)
 * - session_or_public_table: like session, or nothing when the operation serves a public table
 * - gateway: an SMS gateway's o_u (phone) and sesskey (ctx.gateway; no actor)
 * - session_or_gateway: like session, or a gateway's sesskey acting for the sender u_c names
 *   (ctx.gateway and ctx.actor: see '#core/auth/gateway_auth')
 */
export type OperationAuth =
  'none' | 'session' | 'session_or_public_table' | 'gateway' | 'session_or_gateway'

/** An area a session can hide (createSesskey restrictions hideMessages, hideTables, hideEvents). */
export type OperationArea = 'messages' | 'tables' | 'events'

/** Who is calling: the authenticated user (o_u) and the user acted for (u_c). */
export interface Actor {
  /** The user the operation acts as (u_c; equals principal unless acting on behalf). */
  user: User
  /** The user who holds the sesskey (o_u). */
  principal: User
  session: ApiSession
  restrictions: SessionRestrictions
  onBehalf: boolean
  /**
   * Set when a table token acts (tables plugin, table_tokens_service): `user` is the token's
   * creator, there is no real session, and writes are recorded as made by this token.
   */
  token?: { id: number }
  /** The request's address (api.php, the console): the audit log records it (docs/audit.md). */
  address?: string
}

/**
 * What an operation takes as multipart file parts. Only an operation that declares it gets files:
 * for any other, api.php's body parser writes no part to disk once `req` names it.
 */
export interface OperationFiles {
  /** Largest total of the request's file parts, in bytes (PAYLOAD_TOO_LARGE past it). */
  maxBytes: number
}

export interface OperationContext {
  req: string
  /** All decoded parameters, before validation. */
  params: Params
  files: UploadedFile[]
  /** Null only for auth 'none' and 'gateway', and for anonymous access to public tables. */
  actor: Actor | null
  /** The SMS gateway whose sesskey the request carries (auth gateway, session_or_gateway). */
  gateway?: GatewayPrincipal | null
  ip: string
  logger: Logger
}

/**
 * One api.php operation: one use case, one class. Subclasses set the static
 * wire metadata and implement handle(); they return plain data (the envelope
 * is added by the dispatcher) and throw RpcError for failures.
 */
export abstract class BaseOperation<
  Input = any,
  Output extends Record<string, unknown> = Record<string, unknown>,
> {
  /** Wire name (`req`). Not `static name`, which would shadow Function.name. */
  static operation: string
  static auth: OperationAuth = 'session'
  static validator?: VineValidator<any, any>
  /** Writes data: refused for read-only sessions. */
  static writes = false
  /** Area refused to sessions that hide it. */
  static area?: OperationArea
  /** Set by the operations that take uploaded files (fileUpload); others take none. */
  static files?: OperationFiles

  abstract handle(input: Input, ctx: OperationContext): Promise<Output>
}

export type OperationClass = {
  new (...args: any[]): BaseOperation
  operation: string
  auth: OperationAuth
  validator?: VineValidator<any, any>
  writes: boolean
  area?: OperationArea
  files?: OperationFiles
}
