import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { StampService } from '#core/services/stamp_service'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { book, client } from '#plugins/books/tests/helpers/books'
import { SmsOutboxService, type OutboundSms } from '#plugins/gateways/services/sms_outbox_service'
import { registeredGateway, uniquePhone } from './gateways.js'

const [stamps, outbox, access] = await Promise.all([
  app.container.make(StampService),
  app.container.make(SmsOutboxService),
  app.container.make(BookAccessService),
])

let counter = 0

/** Queues an SMS the way copies, reminders and invitations do: in a write's transaction. */
export function enqueue(sms: Partial<OutboundSms> & { bookId?: number | null }) {
  counter++
  return stamps.write(({ trx, afterCommit }) =>
    outbox.enqueue(
      trx,
      {
        to: uniquePhone(),
        text: `SMS ${counter}`,
        kind: 'copy',
        idempotencyKey: `test:${Date.now()}:${counter}:${Math.random()}`,
        ...sms,
      },
      afterCommit
    )
  )
}

/** A book and a gateway an administrator fixed to it: SMS about the book go to that gateway. */
export async function bookWithGateway() {
  const owner = await client()
  const target = await book(owner)
  const bookId = (await access.resolve(target.b_o, target.b_c))!.id
  const gateway = await registeredGateway({ book: target })
  return { owner, target, bookId, gateway }
}

export const smsRows = (where: Record<string, unknown>) =>
  db.from('gateways_sms_outbox').where(where).orderBy('id')

export { outbox as smsOutbox }
