import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { UserService } from '#core/services/user_service'
import { StampService } from '#core/services/stamp_service'

/**
 * userInfo is answered when it changed after the client's `sstamp` (or when no
 * sstamp is given); `sstamp` is always the current server stamp.
 */
@inject()
export default class GetUserInfo extends BaseOperation {
  static operation = 'getUserInfo'
  static validator = vine.compile(vine.object({ sstamp: stamp().optional() }))

  constructor(
    private users: UserService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: { sstamp?: number }, ctx: OperationContext) {
    // Answered without waiting where nothing needs to (SQLite, in-memory stamps): every await
    // costs a turn of the microtask queue, and clients poll getUserInfo.
    const sstamp = this.stamps.watermarkNow() ?? (await this.stamps.watermark())
    const user = ctx.actor!.user
    if (input.sstamp !== undefined && Number(user.sstamp) <= input.sstamp) return { sstamp }
    const userInfo = this.users.userInfo(user)
    return { sstamp, userInfo: userInfo instanceof Promise ? await userInfo : userInfo }
  }
}
