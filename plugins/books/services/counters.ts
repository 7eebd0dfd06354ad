import app from '@adonisjs/core/services/app'
import type { BookCountersService } from './book_counters_service.js'

/** The booted BookCountersService singleton. */
let counters: BookCountersService

await app.booted(async () => {
  counters = await app.container.make('books.counters')
})

export { counters as default }
