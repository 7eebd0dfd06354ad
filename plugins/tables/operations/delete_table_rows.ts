import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flag } from '#core/rpc/schema'
import { rowsService } from '../services/rows_service.js'
import { asList } from '../services/wire.js'

/** deleteTableRows (client-facts): `rows` is an array of ids (JSON or `rows[0]=5` form); tmp ids are skipped. */
export default class DeleteTableRows extends BaseOperation {
  static operation = 'deleteTableRows'
  static writes = true
  static area = 'tables' as const
  static validator = vine.compile(
    vine.object({
      b_o: vine.string().optional(),
      rows: vine.any(),
      catId: vine.any().optional(),
      bypassUrlTrigger: flag().optional(),
    })
  )

  async handle(input: any, ctx: OperationContext) {
    const keys = asList(input.rows, 'rows').map((item) => String(item).trim())
    const ids: number[] = []
    for (const key of keys) {
      if (key.startsWith('tmp')) continue
      if (!/^\d+$/.test(key)) throw rpcError('INVALID_PARAMETER', `Invalid row id "${key}" in rows`)
      ids.push(Number(key))
    }
    if (ids.length === 0) return { deleted: 0, formLastModified: Math.floor(Date.now() / 1000) }
    return rowsService.deleteRows(ctx.actor!, ids, {
      b_o: input.b_o,
      bypassUrlTrigger: input.bypassUrlTrigger,
    })
  }
}
