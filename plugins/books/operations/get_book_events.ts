import vine from '@vinejs/vine'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/schema'
import stamps from '#core/services/stamps'
import bookAccess from '../services/book_access.js'
import events from '../services/events.js'
import { bookFields, bookOf } from '../validators/params.js'

/**
 * getBookEvents: the book's calendar events overlapping dateMin..dateMax
 * (yyyy-mm-dd, whole UTC days), by start time; limit (default 100, at most
 * 1000) and page (from 1); events_ids and participants (ids or user codes,
 * comma-separated or JSON arrays) narrow the list. Answered as bookEvents.
 */
export default class GetBookEvents extends BaseOperation {
  static operation = 'getBookEvents'
  static area = 'events' as const
  static validator = vine.compile(
    vine.object({
      ...bookFields,
      dateMin: vine.string().trim().optional(),
      dateMax: vine.string().trim().optional(),
      limit: stamp().range([1, 1000]).optional(),
      page: stamp().optional(),
    })
  )

  async handle(
    input: {
      b_o?: string
      b_c?: string
      dateMin?: string
      dateMax?: string
      limit?: number
      page?: number
    },
    ctx: OperationContext
  ) {
    const sstamp = await stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    const book = await bookAccess.resolveFor(ctx.actor!, named.b_o, named.b_c, 'read')
    const bookEvents = await events.list(book, {
      dateMin: input.dateMin || undefined,
      dateMax: input.dateMax || undefined,
      limit: input.limit,
      page: input.page,
      eventIds: ctx.params.events_ids,
      participants: ctx.params.participants,
    })
    return { sstamp, b_o: book.b_o, b_c: book.b_c, bookEvents }
  }
}
