import app from '@adonisjs/core/services/app'
import type { BookAccessService } from './book_access_service.js'

/** The booted BookAccessService singleton (bound by the books plugin's provider). */
let bookAccess: BookAccessService

await app.booted(async () => {
  bookAccess = await app.container.make('books.access')
})

export { bookAccess as default }
