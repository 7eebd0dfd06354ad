import app from '@adonisjs/core/services/app'
import { OutboxService } from '#core/outbox/outbox_service'
import { caller, makeBook, ok, type Call } from '#plugins/tables/tests/helpers/tables'
import settings from '#core/settings/main'
import webhooksConfig from '../../config.js'
import { parseRanges } from '../../lib/address_guard.js'
import { startReceiver } from './receiver.js'

export type Book = Awaited<ReturnType<typeof makeBook>>

/**
 * Loopback is refused by default; these tests allow it explicitly (and
 * nothing else), and shorten the outbox's backoff and the request timeout.
 */
export async function loosen() {
  const outbox = await app.container.make(OutboxService)
  const saved = {
    ranges: webhooksConfig.allowedRanges,
    backoff: { ...outbox.settings.backoff },
  }
  webhooksConfig.allowedRanges = parseRanges('127.0.0.0/8,::1/128')
  // A runtime setting: changed as the console's Settings page does, undone below.
  await settings.update('webhooks.timeoutMs', 500)
  outbox.settings.backoff.baseMs = 30
  outbox.settings.backoff.maxMs = 100
  return async () => {
    webhooksConfig.allowedRanges = saved.ranges
    Object.assign(outbox.settings.backoff, saved.backoff)
    await settings.update('webhooks.timeoutMs', null)
  }
}

/**
 * What most groups set up: a new book, its owner's api.php caller, a loopback
 * receiver, and loosen(); `teardown` (the group setup's answer) undoes both.
 */
export async function withReceiver() {
  const book = await makeBook()
  const call = caller(book.session)
  const receiver = await startReceiver()
  const restore = await loosen()
  return {
    book,
    call,
    receiver,
    teardown: async () => {
      await restore()
      await receiver.close()
    },
  }
}

/**
 * Groups whose deliveries another process sends (sharing the database): this
 * process's sweeper stays out of the way, and loosen() applies.
 */
export async function withoutSweeper() {
  const outbox = await app.container.make(OutboxService)
  outbox.stopSweeper()
  const restore = await loosen()
  return async () => {
    await restore()
    outbox.startSweeper()
  }
}

export async function table(call: Call, book: Book) {
  const { catId } = ok(
    await call('createTable', {
      b_o: book.b_o,
      b_c: book.b_c,
      name: 'Orders',
      fields: JSON.stringify([
        { name: 'Item', type: 'shorttext' },
        { name: 'Qty', type: 'integer' },
      ]),
    })
  )
  const tables = ok(
    await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: 'true' })
  )
  const fields = tables.bookTables.categories.find((c: any) => c.id === catId).fields
  const id = (name: string) => fields.find((field: any) => field.name === name).id as number
  return { catId, item: id('Item'), qty: id('Qty') }
}
