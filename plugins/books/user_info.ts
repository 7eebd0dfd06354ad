import app from '@adonisjs/core/services/app'
import type { UserInfoContributor } from '#core/plugins/define_plugin'
import { BookService } from './services/book_service.js'

/** The container's BookService, resolved on the first call (a singleton: built once). */
let books: BookService | undefined

/** getUserInfo's nbBooks: books the user is invited to or a member of (as getAllBooks lists them). */
const contribute: UserInfoContributor = async (userId) => {
  books ??= await app.container.make(BookService)
  return { nbBooks: await books.countBooks(userId) }
}

export default contribute
