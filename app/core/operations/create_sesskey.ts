import vine from '@vinejs/vine'
import { BaseOperation } from '#core/rpc/base_operation'
import { parseRestrictions } from '#core/rpc/restrictions'
import { serializeRestrictions } from '#core/serializers/session_serializer'
import access from '#core/services/access'

/** Needs only o_u and oauthkey: u_c and an empty `restrictions` are accepted and ignored. */
export default class CreateSesskey extends BaseOperation {
  static operation = 'createSesskey'
  static auth = 'none' as const
  static writes = true
  static validator = vine.compile(
    vine.object({
      o_u: vine.string().trim().minLength(1),
      oauthkey: vine.string().trim().minLength(1),
      restrictions: vine.any().optional(),
    })
  )

  async handle(input: { o_u: string; oauthkey: string; restrictions?: unknown }) {
    const restrictions = parseRestrictions(input.restrictions)
    const { sesskey, session, appName } = await access.createSesskey({ ...input, restrictions })
    return {
      sesskey,
      id: String(session.id),
      appName,
      restrictions: serializeRestrictions(restrictions),
    }
  }
}
