import type { SocketContext, SystemMessageFields } from '#core/socket/socket_handler'
import { MessageType, type OutFrame } from '#core/socket/protocol'
import type { BookAccessService } from '../services/book_access_service.js'

/** The receive-system-message frame (type 11) for a handled system message. */
export function systemFrame(
  msg: string,
  ctx: SocketContext,
  input: SystemMessageFields,
  extra: Record<string, unknown> = {}
): OutFrame {
  const frame: OutFrame = { type: MessageType.SYSTEM_MESSAGE, u_c: ctx.actor.user.code, msg }
  if (input.b_o) frame.b_o = input.b_o
  if (input.b_c) frame.b_c = input.b_c
  if (input.param !== undefined) frame.param = input.param
  if (input.value !== undefined) frame.value = input.value as any
  return { ...frame, ...extra }
}

/** To the acting user's other sockets and SSE channel (their other devices). */
export function toOwnDevices(ctx: SocketContext, frame: OutFrame) {
  ctx.hub.deliver({ userIds: [ctx.actor.user.id], frame, exceptConnection: ctx.connection.id })
}

/** To every accepted member of the book (the sender's own socket excepted: it has its ack). */
export async function toBookMembers(
  ctx: SocketContext,
  access: BookAccessService,
  bookId: number,
  frame: OutFrame
) {
  const userIds = await access.memberUserIds(bookId)
  ctx.hub.deliver({ userIds, frame, exceptConnection: ctx.connection.id })
}
