import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { TableTokensService } from '../services/table_tokens_service.js'
import { ownerField } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...ownerField, catId: stamp() }))

/** listTableTokens: a table's row and form tokens (never the tokens themselves). */
@inject()
export default class ListTableTokens extends BaseOperation {
  static operation = 'listTableTokens'
  static area = 'tables' as const
  static validator = validator

  constructor(private tokens: TableTokensService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.tokens.list(ctx.actor!, input)
  }
}
