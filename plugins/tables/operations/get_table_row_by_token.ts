import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { TableTokensService } from '../services/table_tokens_service.js'
import { tokenField } from '../validators/params.js'

const validator = vine.compile(vine.object(tokenField))

/** getTableRowByToken (no session): the token's row with the fields its view shows. */
@inject()
export default class GetTableRowByToken extends BaseOperation {
  static operation = 'getTableRowByToken'
  static auth = 'none' as const
  static validator = validator

  constructor(private tokens: TableTokensService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.tokens.row(input.token, ctx.ip)
  }
}
