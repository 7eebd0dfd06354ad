import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { list, stamp } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { BookService } from '../services/book_service.js'
import { bookFields } from '../validators/params.js'

const validator = vine.compile(
  vine.object({ ...bookFields, smid: stamp().optional(), books: list().optional() })
)

/**
 * markBooksMessagesAsRead (parameters not shown by the spec): one book
 * (b_o, b_c, optional smid = read up to that message), several (`books`: a
 * JSON array of {b_o, b_c} or of "b_o/b_c" strings), or, with neither, every
 * book of the user (a restricted session: its book). See BookService.markRead.
 */
@inject()
export default class MarkBooksMessagesAsRead extends BaseOperation {
  static operation = 'markBooksMessagesAsRead'
  static writes = true
  static area = 'messages' as const
  static validator = validator

  constructor(
    private books: BookService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const books = await this.books.markRead(ctx.actor!, input)
    return { sstamp: await this.stamps.watermark(), books }
  }
}
