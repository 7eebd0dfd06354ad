import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A user's live memberships, covered: getUserInfo's nbBooks and getAllBooks
 * walk them for every call. Without it MariaDB counted a user's books by
 * scanning the books table.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('book_members', (table) => {
      table.index(['user_id', 'del', 'book_id'], 'book_members_user_id_del_book_id_index')
    })
  }

  async down() {
    this.schema.alterTable('book_members', (table) => {
      table.dropIndex(['user_id', 'del', 'book_id'], 'book_members_user_id_del_book_id_index')
    })
  }
}
