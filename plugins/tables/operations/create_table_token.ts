import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, stamp, text } from '#core/rpc/wire'
import { TableTokensService } from '../services/table_tokens_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...ownerField,
    catId: stamp(),
    rowId: text().optional(),
    viewId: stamp().optional(),
    readOnly: flag().optional(),
    expiresIn: stamp().optional(),
    requiredFields: vine.any().optional(),
  })
)

/** createTableToken: a row token (rowId) or a form token (viewId); answers the token once. */
@inject()
export default class CreateTableToken extends BaseOperation {
  static operation = 'createTableToken'
  static writes = true
  static area = 'tables' as const
  static validator = validator

  constructor(private tokens: TableTokensService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.tokens.create(ctx.actor!, input)
  }
}
