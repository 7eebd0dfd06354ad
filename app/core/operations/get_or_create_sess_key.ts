import vine from '@vinejs/vine'
import { BaseOperation } from '#core/rpc/base_operation'
import access from '#core/services/access'
import stamps from '#core/services/stamps'

/** Answers the caller's sesskey while it is valid, or a new one made from the oauthkey. */
export default class GetOrCreateSessKey extends BaseOperation {
  static operation = 'getOrCreateSessKey'
  static auth = 'none' as const
  static validator = vine.compile(
    vine.object({
      o_u: vine.string().trim().minLength(1),
      sesskey: vine.string().trim().optional(),
      oauthkey: vine.string().trim().optional(),
    })
  )

  async handle(input: { o_u: string; sesskey?: string; oauthkey?: string }) {
    const sstamp = await stamps.watermark()
    const { sesskey, user } = await access.getOrCreateSesskey(input)
    return { sesskey, u_c: user.code, sstamp }
  }
}
