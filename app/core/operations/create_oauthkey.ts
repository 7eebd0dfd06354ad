import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag } from '#core/rpc/wire'
import { AccessService } from '#core/services/access_service'

const validator = vine.compile(
  vine.object({
    appkey: vine.string().trim().minLength(1),
    login: vine.string().trim().minLength(1),
    pwd: vine.string().minLength(1),
    createUserAccount: flag().optional(),
  })
)

@inject()
export default class CreateOauthkey extends BaseOperation {
  static operation = 'createOauthkey'
  static auth = 'none' as const
  static writes = true
  static validator = validator

  constructor(private access: AccessService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { oauthkey, record, user } = await this.access.createOauthkey({ ...input, ip: ctx.ip })
    return { oauthkey, id: String(record.id), o_u: user.code }
  }
}
