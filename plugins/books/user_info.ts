import type { UserInfoContributor } from '#core/plugins/define_plugin'
import books from './services/books.js'

/** getUserInfo's nbBooks: books the user is invited to or a member of (as getAllBooks lists them). */
const contribute: UserInfoContributor = async (userId) => ({
  nbBooks: await books.countBooks(userId),
})

export default contribute
