import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { StampService } from '#core/services/stamp_service'
import { MemberService } from '../services/member_service.js'
import { BookService } from '../services/book_service.js'
import { serializeBook } from '../serializers/book_serializer.js'
import { bookFields, bookOf } from '../validators/params.js'

const validator = vine.compile(vine.object({ ...bookFields }))

/** acceptInvitation (extension; also a socket system message): an invitation (sent) becomes accepted. Accepting twice is not an error. */
@inject()
export default class AcceptInvitation extends BaseOperation {
  static operation = 'acceptInvitation'
  static writes = true
  static validator = validator

  constructor(
    private members: MemberService,
    private books: BookService,
    private stamps: StampService
  ) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const actor = ctx.actor!
    const named = bookOf(actor, input)
    await this.members.accept(actor, named.b_o, named.b_c)
    return {
      sstamp: await this.stamps.watermark(),
      book: serializeBook(await this.books.infoFor(actor, named.b_o, named.b_c)),
    }
  }
}
