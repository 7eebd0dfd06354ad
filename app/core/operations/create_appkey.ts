import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation } from '#core/rpc/base_operation'
import { AccessService } from '#core/services/access_service'

const validator = vine.compile(
  vine.object({ appname: vine.string().trim().minLength(1).maxLength(191) })
)

@inject()
export default class CreateAppkey extends BaseOperation {
  static operation = 'createAppkey'
  static auth = 'none' as const
  static writes = true
  static validator = validator

  constructor(private access: AccessService) {
    super()
  }

  async handle(input: Infer<typeof validator>) {
    const { appkey, application } = await this.access.createAppkey(input.appname)
    return { appkey, id: String(application.id) }
  }
}
