import { SocketHandler, type SocketContext } from '#core/socket/socket_handler'
import { MessageType, flagOf, intOf, textOf, type Frame } from '#core/socket/protocol'
import { rpcError } from '#core/rpc/errors'
import { rowsService } from '../services/rows_service.js'

/**
 * Update table value (type 13, spec part 6): one cell, as updateTableValue;
 * a rowId starting with `tmp` creates a row. `obo_u` names the user the write
 * acts for (a delegate such as a chatbot); the kernel checks it like u_c.
 * The spec defines no ack: success answers nothing (members get book updates
 * ready through tables:rows_changed), a refusal answers an error frame (type 0)
 * carrying rowId and fieldId.
 */
export default class UpdateTableValue extends SocketHandler {
  static type = MessageType.UPDATE_TABLE_VALUE
  static writes = true
  static area = 'tables' as const
  static onBehalfField = 'obo_u'

  async handle(frame: Frame, ctx: SocketContext) {
    const rowId = textOf(frame.rowId)?.trim() ?? ''
    if (rowId === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: rowId')
    const fieldId = intOf(frame.fieldId)
    if (fieldId === undefined) throw rpcError('MISSING_PARAMETER', 'Missing parameter: fieldId')
    if (Number.isNaN(fieldId) || fieldId <= 0) {
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter fieldId: must be a positive integer', {
        field: 'fieldId',
      })
    }
    const bypass = flagOf(frame.bypassUrlTrigger)
    await rowsService.updateValue(ctx.actor, {
      rowId,
      fieldId,
      value: frame.value ?? '',
      b_o: textOf(frame.b_o)?.trim() || undefined,
      bypassUrlTrigger: bypass,
      source: 'socket',
    })
  }
}
