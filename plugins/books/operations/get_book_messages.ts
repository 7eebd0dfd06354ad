import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { stamp } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { MAX_SEARCH_LENGTH, MessageQueries } from '../services/message_queries.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(
  vine.object({
    ...bookFields,
    sstamp: stamp().optional(),
    smidFirst: stamp().optional(),
    smidLast: stamp().optional(),
    nbMax: stamp().optional(),
    page: stamp().optional(),
    search_string: vine.string().maxLength(MAX_SEARCH_LENGTH).optional(),
  })
)

/** The five rules of spec 4.A.3 are implemented by MessageQueries.list; the array is answered as bookMessages. */
@inject()
export default class GetBookMessages extends BaseOperation {
  static operation = 'getBookMessages'
  static area = 'messages' as const
  static validator = validator

  constructor(
    private queries: MessageQueries,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const sstamp = await this.stamps.watermark()
    const named = bookOf(ctx.actor!, input)
    const { book, messages } = await this.queries.listFor(ctx.actor!, named.b_o, named.b_c, {
      nbMax: input.nbMax,
      page: input.page,
      // 0 is what clients send when they hold nothing yet: no bound.
      smidFirst: input.smidFirst || undefined,
      smidLast: input.smidLast || undefined,
      sstamp: input.sstamp,
      search: input.search_string,
    })
    return { sstamp, b_c: book.b_c, b_o: book.b_o, bookMessages: messages }
  }
}
