import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation } from '#core/rpc/base_operation'
import { parseRestrictions } from '#core/auth/restrictions'
import { serializeRestrictions } from '#core/serializers/session_serializer'
import { AccessService } from '#core/services/access_service'

/** Needs only o_u and oauthkey: u_c and an empty `restrictions` are accepted and ignored. */
const validator = vine.compile(
  vine.object({
    o_u: vine.string().trim().minLength(1),
    oauthkey: vine.string().trim().minLength(1),
    restrictions: vine.any().optional(),
  })
)

@inject()
export default class CreateSesskey extends BaseOperation {
  static operation = 'createSesskey'
  static auth = 'none' as const
  static writes = true
  static validator = validator

  constructor(private access: AccessService) {
    super()
  }

  async handle(input: Infer<typeof validator>) {
    const restrictions = parseRestrictions(input.restrictions)
    const { sesskey, session, appName } = await this.access.createSesskey({
      ...input,
      restrictions,
    })
    return {
      sesskey,
      id: String(session.id),
      appName,
      restrictions: serializeRestrictions(restrictions),
    }
  }
}
