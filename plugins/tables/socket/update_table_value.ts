import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { SocketHandler, type SocketContext } from '#core/socket/socket_handler'
import { MessageType } from '#core/socket/protocol'
import { RowsService } from '../services/rows_service.js'
import { cellFields } from '../validators/params.js'

/** The frame's fields, read by the rules updateTableValue reads them with (cellFields). */
const validator = vine.compile(vine.object(cellFields))

/**
 * Update table value (type 13, docs/spec/service-interface.md part 6): one cell, as updateTableValue;
 * a rowId starting with `tmp` creates a row. `obo_u` names the user the write
 * acts for (a delegate such as a chatbot); the kernel checks it like u_c.
 * The spec defines no ack: success answers nothing (members get book updates
 * ready through tables:rows_changed), a refusal answers an error frame (type 0)
 * carrying rowId and fieldId.
 */
@inject()
export default class UpdateTableValue extends SocketHandler {
  static type = MessageType.UPDATE_TABLE_VALUE
  static writes = true
  static area = 'tables' as const
  static onBehalfField = 'obo_u'
  static validator = validator

  constructor(private rows: RowsService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: SocketContext) {
    await this.rows.updateValue(ctx.actor, {
      rowId: input.rowId,
      fieldId: input.fieldId,
      value: input.value ?? '',
      b_o: input.b_o || undefined,
      bypassUrlTrigger: input.bypassUrlTrigger,
      source: 'socket',
    })
  }
}
