import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { list, stamp } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { EventService } from '../services/event_service.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...bookFields,
    dateMin: vine.string().trim().optional(),
    dateMax: vine.string().trim().optional(),
    limit: stamp().range([1, 1000]).optional(),
    page: stamp().optional(),
    events_ids: list().optional(),
    participants: list().optional(),
  })
)

/**
 * getBookEvents: the book's calendar events overlapping dateMin..dateMax
 * (yyyy-mm-dd, whole UTC days), by start time; limit (default 100, at most
 * 1000) and page (from 1); events_ids and participants (ids or user codes,
 * comma-separated or JSON arrays) narrow the list. Answered as bookEvents.
 */
@inject()
export default class GetBookEvents extends BaseOperation {
  static operation = 'getBookEvents'
  static area = 'events' as const
  static validator = validator

  constructor(
    private events: EventService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const sstamp = await this.stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    const { book, events } = await this.events.listFor(ctx.actor!, named.b_o, named.b_c, {
      dateMin: input.dateMin || undefined,
      dateMax: input.dateMax || undefined,
      limit: input.limit,
      page: input.page,
      eventIds: input.events_ids,
      participants: input.participants,
    })
    return { sstamp, b_o: book.b_o, b_c: book.b_c, bookEvents: events }
  }
}
