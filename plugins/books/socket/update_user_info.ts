import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SystemMessageHandler, type SocketContext } from '#core/socket/socket_handler'
import { text } from '#core/rpc/wire'
import { SystemMessageService } from '../services/system_message_service.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

/** `value` is read as received (its type depends on param): the service checks it. */
const validator = vine.compile(
  vine.object({
    param: text(),
    value: vine.any().nullable().optional(),
  })
)

/** updateUserInfo (param, value): a user-info parameter; the user's other devices get the new value. */
@inject()
export default class UpdateUserInfo extends SystemMessageHandler {
  static msg = 'updateUserInfo'
  static validator = validator

  constructor(private systemMessages: SystemMessageService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    const { param, value } = await this.systemMessages.updateUserInfo(ctx.actor, input)
    toOwnDevices(ctx, systemFrame(UpdateUserInfo.msg, ctx, { param, value }))
  }
}
