import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag } from '#core/rpc/schema'
import access from '#core/services/access'

export default class CreateOauthkey extends BaseOperation {
  static operation = 'createOauthkey'
  static auth = 'none' as const
  static writes = true
  static validator = vine.compile(
    vine.object({
      appkey: vine.string().trim().minLength(1),
      login: vine.string().trim().minLength(1),
      pwd: vine.string().minLength(1),
      createUserAccount: flag().optional(),
    })
  )

  async handle(
    input: { appkey: string; login: string; pwd: string; createUserAccount?: boolean },
    ctx: OperationContext
  ) {
    const { oauthkey, record, user } = await access.createOauthkey({ ...input, ip: ctx.ip })
    return { oauthkey, id: String(record.id), o_u: user.code }
  }
}
