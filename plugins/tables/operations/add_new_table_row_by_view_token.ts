import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { object } from '#core/rpc/wire'
import { TableTokensService } from '../services/table_tokens_service.js'
import { tokenField } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...tokenField, fieldValues: object() }))

/** addNewTableRowByViewToken (no session): a new row from a form token; answers its id. */
@inject()
export default class AddNewTableRowByViewToken extends BaseOperation {
  static operation = 'addNewTableRowByViewToken'
  static auth = 'none' as const
  static writes = true
  static validator = validator

  constructor(private tokens: TableTokensService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    return this.tokens.addRow(input.token, ctx.ip, input.fieldValues)
  }
}
