import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import {
  MessageWriter,
  type SendInput,
  type SendResult,
  type WithinCreate,
} from './message_writer.js'

export type { SendInput, SendResult, WithinCreate } from './message_writer.js'

/**
 * The one entry point of a message send: sendMsg (api.php) and the socket's
 * send message (type 1) both call send(), so both answer the same way. The
 * work is MessageWriter's; reads are MessageQueries', read markers
 * BookCountersService's, copy and move MessageTransfer's.
 */
@inject()
export class MessageService {
  constructor(private writer: MessageWriter) {}

  /** A new message, an edit (smid) or a delete (del): see MessageWriter.send. */
  send(actor: Actor, input: SendInput): Promise<SendResult> {
    return this.writer.send(actor, input)
  }

  /** A new message written with another plugin's rows in its transaction: see MessageWriter.createWithin. */
  sendWithin(actor: Actor, input: SendInput, within: WithinCreate): Promise<SendResult> {
    return this.writer.createWithin(actor, input, within)
  }
}
