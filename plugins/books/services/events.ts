import app from '@adonisjs/core/services/app'
import type { EventService } from './event_service.js'

/** The booted EventService singleton. */
let events: EventService

await app.booted(async () => {
  events = await app.container.make('books.events')
})

export { events as default }
