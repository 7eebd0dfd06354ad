import app from '@adonisjs/core/services/app'
import type { UserInfoContributor } from '#core/plugins/define_plugin'
import { BookService } from './services/book_service.js'

/** The container's BookService, resolved on the first call (a singleton: built once). */
let books: BookService | undefined

/** getUserInfo's nbBooks: books the user is invited to or a member of (as getAllBooks lists them). */
const contribute: UserInfoContributor = (userId) => {
  if (!books)
    return app.container.make(BookService).then((service) => {
      books = service
      return contribute(userId)
    })
  // At once on SQLite (no promise to wait for): getUserInfo is the call clients poll.
  const nbBooks = books.countBooksNow(userId)
  return nbBooks === null
    ? books.countBooks(userId).then((total) => ({ nbBooks: total }))
    : { nbBooks }
}

export default contribute
