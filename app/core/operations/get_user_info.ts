import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import users from '#core/services/users'
import stamps from '#core/services/stamps'

/**
 * userInfo is answered when it changed after the client's `sstamp` (or when no
 * sstamp is given); `sstamp` is always the current server stamp.
 */
export default class GetUserInfo extends BaseOperation {
  static operation = 'getUserInfo'
  static validator = vine.compile(vine.object({ sstamp: stamp().optional() }))

  async handle(input: { sstamp?: number }, ctx: OperationContext) {
    const sstamp = await stamps.watermark()
    const user = ctx.actor!.user
    if (input.sstamp !== undefined && Number(user.sstamp) <= input.sstamp) return { sstamp }
    return { sstamp, userInfo: await users.userInfo(user) }
  }
}
