import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Cell history's write cost (issue 21 item 9): every entry was inserted into four secondary
 * indexes, two of them at a random place (the row's). Two go:
 * - (category_id, row_id, field_id, id): getRowHistory with a fieldId reads the row's entries
 *   through (category_id, row_id, id) and keeps the field's, newest first, like without one;
 * - (created_at): retention by age walks the table in id order from its oldest entry
 *   (HistoryService.prune), entries being appended in time order.
 * Left: the row's entries (activity cells, getRowHistory, rollbacks) and the write's
 * (rollBackBeforeChange scope=change).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('table_cell_history', (table) => {
      table.dropIndex(['category_id', 'row_id', 'field_id', 'id'], 'table_cell_history_cell_idx')
      table.dropIndex(['created_at'], 'table_cell_history_age_idx')
    })
  }

  async down() {
    this.schema.alterTable('table_cell_history', (table) => {
      table.index(['category_id', 'row_id', 'field_id', 'id'], 'table_cell_history_cell_idx')
      table.index(['created_at'], 'table_cell_history_age_idx')
    })
  }
}
