import vine from '@vinejs/vine'
import { BaseOperation } from '#core/rpc/base_operation'
import access from '#core/services/access'

export default class CreateAppkey extends BaseOperation {
  static operation = 'createAppkey'
  static auth = 'none' as const
  static writes = true
  static validator = vine.compile(
    vine.object({ appname: vine.string().trim().minLength(1).maxLength(191) })
  )

  async handle(input: { appname: string }) {
    const { appkey, application } = await access.createAppkey(input.appname)
    return { appkey, id: String(application.id) }
  }
}
