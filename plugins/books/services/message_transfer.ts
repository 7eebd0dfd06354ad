import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { TABLES, nowSeconds, type MessageRow } from '../models/records.js'
import { BookAccessService } from './book_access_service.js'
import { EventService } from './event_service.js'
import { MessageWriter, messageNotFound } from './message_writer.js'
import '../events.js'

/** copyOrMoveMessage's input: the message (and optionally its book), the target book, copy or move. */
export interface TransferInput {
  smid: number
  b_o?: string
  b_c?: string
  /** The target book: its code is required; its owner defaults to the acting user. */
  to_b_o?: string
  to_b_c?: string
  move: boolean
}

/**
 * copyOrMoveMessage: a copy of the message (text, bodies, event, medias) in
 * another book; a move also deletes the original. Reading the source and
 * writing the target are required; moving also needs the right to delete it.
 */
@inject()
export class MessageTransfer {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private events: EventService,
    private writer: MessageWriter
  ) {}

  async copyOrMove(actor: Actor, input: TransferInput) {
    if (!input.to_b_c)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: to_b_c', { field: 'to_b_c' })
    const target = await this.access.resolveFor(
      actor,
      input.to_b_o || actor.user.code,
      input.to_b_c,
      'write'
    )
    const { row, book: source } = await this.writer.locate(actor, input)
    if (row.del) throw messageNotFound()
    if (input.move) await this.writer.assertCanChange(actor, source, row)
    else await this.access.assert(actor, source, 'read')
    await this.access.assert(actor, target, 'write')
    if (input.move && source.id === target.id) {
      throw rpcError(
        'INVALID_PARAMETER',
        'Invalid parameter: a message cannot be moved into its own book',
        { field: 'to_b_c' }
      )
    }
    const eventView = row.has_event ? await this.writer.eventOf(Number(row.smid)) : null
    const copy = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const now = nowSeconds()
      const original: Partial<MessageRow> = { ...row }
      delete original.smid
      const fields = {
        ...original,
        book_id: target.id,
        uuid: randomUUID(),
        created: now,
        last_modified: now,
        cstamp: stamp,
        sstamp: stamp,
      }
      const [smid] = await trx.table(TABLES.messages).insert(fields)
      const inserted = { ...fields, smid: Number(smid) } as MessageRow
      if (eventView) {
        await this.events.save(trx, stamp, inserted, {
          eventStart: Number(eventView.row.event_start),
          eventEnd: Number(eventView.row.event_end),
          eventTimezone: eventView.row.event_timezone,
          eventAllDay: Boolean(eventView.row.all_day),
          isBusy: Boolean(eventView.row.is_busy),
          // Participants stay only if they belong to the target book too.
          participantIds: await this.membersAmong(
            trx,
            target.id,
            eventView.participants.map((p) => p.id)
          ),
          reminderData: JSON.parse(eventView.row.reminder_data ?? '{}'),
        })
      }
      await this.writer.stage(trx, afterCommit, 'created', actor, target, inserted, stamp)
      const moved = input.move ? await this.writer.markDeleted(trx, stamp, source.id, row) : null
      if (moved) await this.writer.stage(trx, afterCommit, 'deleted', actor, source, moved, stamp)
      afterCommit(async () => {
        await this.writer.afterCreate(actor, target, inserted, null, {
          bookId: source.id,
          smid: Number(row.smid),
        })
        if (moved) {
          await emitter.emit('books:message_deleted', {
            book: source,
            smid: Number(row.smid),
            uuid: row.uuid,
            sstamp: stamp,
            creatorId: Number(row.creator_id),
            actorId: actor.principal.id,
            message: await this.writer.deletedWire(row, stamp, actor),
            movedTo: { bookId: target.id, smid: inserted.smid },
          })
        }
      })
      return inserted
    })
    return {
      book: target,
      smid: copy.smid,
      uuid: copy.uuid,
      sstamp: await this.stamps.watermark(),
    }
  }

  private async membersAmong(trx: TransactionClientContract, bookId: number, userIds: number[]) {
    if (userIds.length === 0) return []
    const rows = await trx
      .from(TABLES.members)
      .where('book_id', bookId)
      .where('del', false)
      .whereIn('user_id', userIds)
      .select('user_id')
    return rows.map((row) => Number(row.user_id))
  }
}
