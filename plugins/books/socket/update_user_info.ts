import {
  SystemMessageHandler,
  type SocketContext,
  type SystemMessageFields,
} from '#core/socket/socket_handler'
import systemMessages from '../services/system_messages.js'
import { systemFrame, toOwnDevices } from './system_broadcast.js'

/** updateUserInfo (param, value): a user-info parameter; the user's other devices get the new value. */
export default class UpdateUserInfo extends SystemMessageHandler {
  static msg = 'updateUserInfo'

  async handle(input: SystemMessageFields, ctx: SocketContext) {
    const { param, value } = await systemMessages.updateUserInfo(ctx.actor, input)
    toOwnDevices(
      ctx,
      systemFrame(UpdateUserInfo.msg, ctx, {
        ...input,
        b_o: undefined,
        b_c: undefined,
        param,
        value,
      })
    )
  }
}
