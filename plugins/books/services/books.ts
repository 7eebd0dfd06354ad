import app from '@adonisjs/core/services/app'
import type { BookService } from './book_service.js'

/** The booted BookService singleton. */
let books: BookService

await app.booted(async () => {
  books = await app.container.make('books.books')
})

export { books as default }
