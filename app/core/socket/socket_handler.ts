import type { Logger } from '@adonisjs/core/logger'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import type { Frame, OutFrame } from './protocol.js'
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
 * handle() calls the plugin's services (the only place of domain logic) and
 * answers the ack frame, if the type has one. Throwing an RpcError answers a
 * refusal: the type's ack with status 'nok', or an error frame (type 0).
 */
export abstract class SocketHandler {
  /** The message type handled (informative: the manifest key is what counts). */
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

  abstract handle(frame: Frame, ctx: SocketContext): Promise<OutFrame | void>
}

export type SocketHandlerClass = {
  new (...args: any[]): SocketHandler
  type: number
  writes: boolean
  area?: OperationArea
  onBehalfField?: string
}

/** The fields of a system message (type 11), as received. */
export interface SystemMessageFields {
  uuid?: string
  b_o?: string
  b_c?: string
  param?: string
  value?: unknown
}

/**
 * One system message (`msg` of a type 11 frame), registered by a plugin in its
 * manifest (`systemMessages: { clearNotRead: () => import(...) }`). The kernel
 * acks with type 12 once handle() resolved (its effect committed), or with
 * type 12 status 'nok' when it throws. handle() broadcasts the receive-system-
 * message (type 11) to the concerned clients through ctx.hub.
 */
export abstract class SystemMessageHandler {
  static msg: string
  static writes = true
  static area?: OperationArea

  abstract handle(input: SystemMessageFields, ctx: SocketContext): Promise<void>
}

export type SystemMessageHandlerClass = {
  new (...args: any[]): SystemMessageHandler
  msg: string
  writes: boolean
  area?: OperationArea
}

/**
 * A plugin's realtime wiring (manifest `realtime`): subscribes to the
 * plugin's events and forwards them to sockets through the hub.
 */
export type RealtimeBinding = (hub: SocketHub) => void | Promise<void>
