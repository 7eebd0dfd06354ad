import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation } from '#core/rpc/base_operation'
import { AccessService } from '#core/services/access_service'
import { StampService } from '#core/services/stamp_service'

/** Answers the caller's sesskey while it is valid, or a new one made from the oauthkey. */
const validator = vine.compile(
  vine.object({
    o_u: vine.string().trim().minLength(1),
    sesskey: vine.string().trim().optional(),
    oauthkey: vine.string().trim().optional(),
  })
)

@inject()
export default class GetOrCreateSessKey extends BaseOperation {
  static operation = 'getOrCreateSessKey'
  static auth = 'none' as const
  static validator = validator

  constructor(
    private access: AccessService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>) {
    const sstamp = await this.stamps.watermark()
    const { sesskey, user } = await this.access.getOrCreateSesskey(input)
    return { sesskey, u_c: user.code, sstamp }
  }
}
