import type { Logger } from '@adonisjs/core/logger'
import type { VineValidator } from '@vinejs/vine'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import type { OutFrame } from './protocol.js'
import type { SocketHub } from './hub.js'

/** What a handler sees of the connection a frame came from. */
export interface SocketOrigin {
  /** Connection id (unique per process). */
  id: string
  /** Sends a frame to this connection only. */
  send(frame: OutFrame): void
}

export interface SocketContext {
  /** Authenticated from the frame's o_u, u_c (obo_u for type 13) and sesskey. */
  actor: Actor
  connection: SocketOrigin
  hub: SocketHub
  logger: Logger
}

/**
 * One client -> server socket message type, registered by a plugin in its
 * manifest (`socket: { 1: () => import('./socket/send_message.js') }`).
 *
 * Shaped like an api.php operation: a module-level compiled VineJS schema
 * built from the '#core/rpc/wire' rules (the same rules api.php's operations
 * use, so the same value gets the same verdict on both entry points), exposed
 * as `static validator`, and `handle(input: Infer<typeof validator>, ctx)`.
 * The socket server authenticates the frame, checks the session's
 * restrictions, validates the frame with that schema (MISSING_PARAMETER /
 * INVALID_PARAMETER) and only then calls handle(), which calls the plugin's
 * services (the only place of domain logic) and answers the ack frame, if the
 * type has one. Throwing an RpcError answers a refusal: the type's ack with
 * status 'nok', or an error frame (type 0). Services come through an
 * `@inject()` constructor: the server makes one instance per class.
 *
 * The base class declares no validator on purpose: SocketHandlerClass (what
 * the manifest and the server take) requires one, so a handler without it is
 * a type error where it is registered.
 */
export abstract class SocketHandler {
  /** The message type handled (must equal the manifest key; a unit test checks it). */
  static type: number
  /** Writes data: refused for read-only sessions. */
  static writes = false
  /** Area refused to sessions that hide it (hideMessages, hideTables, hideEvents). */
  static area?: OperationArea
  /**
   * The frame field naming the user acted for, when it is not u_c (type 13
   * carries obo_u, "on behalf of"). u_c is used when that field is absent.
   */
  static onBehalfField?: string

  abstract handle(input: any, ctx: SocketContext): Promise<OutFrame | void>
}

export type SocketHandlerClass = {
  new (...args: any[]): SocketHandler
  type: number
  /** The frame's schema (vine.compile of '#core/rpc/wire' rules), compiled once at module load. */
  validator: VineValidator<any, any>
  writes: boolean
  area?: OperationArea
  onBehalfField?: string
}

/** The fields a system message (type 11) may carry, as handlers broadcast them. */
export interface SystemMessageFields {
  uuid?: string
  b_o?: string
  b_c?: string
  param?: string
  value?: unknown
}

/**
 * One system message (`msg` of a type 11 frame), registered by a plugin in its
 * manifest (`systemMessages: { clearNotRead: () => import(...) }`). Like a
 * socket handler it declares `static validator` (its fields: b_o, b_c, param,
 * value as it needs them), run by the socket server before handle(); `msg`
 * and `uuid` are the envelope, read by the server. The kernel acks with type
 * 12 once handle() resolved (its effect committed), or with type 12 status
 * 'nok' when it throws. handle() broadcasts the receive-system-message (type
 * 11) to the concerned clients through ctx.hub.
 */
export abstract class SystemMessageHandler {
  /** The system message name (must equal the manifest key; a unit test checks it). */
  static msg: string
  static writes = true
  static area?: OperationArea

  abstract handle(input: any, ctx: SocketContext): Promise<void>
}

export type SystemMessageHandlerClass = {
  new (...args: any[]): SystemMessageHandler
  msg: string
  /** The message's schema (vine.compile of '#core/rpc/wire' rules), compiled once at module load. */
  validator: VineValidator<any, any>
  writes: boolean
  area?: OperationArea
}

/**
 * A plugin's realtime wiring (manifest `realtime`): made once by the
 * container (so its services come through an `@inject()` constructor), then
 * bound to the hub: it subscribes to the plugin's events and forwards them to
 * sockets and SSE channels through the hub.
 */
export interface Realtime {
  bind(hub: SocketHub): void | Promise<void>
}

/** The class a manifest's `realtime` entry exports by default. */
export type RealtimeBinding = new (...args: any[]) => Realtime
