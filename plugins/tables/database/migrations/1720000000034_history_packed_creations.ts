import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Cell history's write cost on a created row (issue 23 item 2): on SQLite a created row's
 * entries are stored in one row of table_cell_history instead of one row each (field_id 0, the
 * entries' field ids, types and values in new_value), at the id of its last entry; the entries
 * keep their own ids, the `entry_count` ids up to it, and every read unpacks them
 * (HistoryService: `unpackEntries`). A plain entry counts 1.
 *
 * On SQLite, a partial index of the packed rows by row: a row's count of entries is then
 * `COUNT(*)` of the row index alone plus its packed rows' extra ones, read from this index,
 * not `SUM(entry_count)` read from every entry (activity cells, 100 rows of 100 entries each:
 * 11.4 ms a page against 7.6). MariaDB has no partial index and no packed rows.
 */
const PACKED_INDEX = 'table_cell_history_packed_idx'

export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('table_cell_history', (table) => {
      table.integer('entry_count').unsigned().notNullable().defaultTo(1)
    })
    this.defer(async (db) => {
      if (db.dialect.name.includes('sqlite'))
        await db.rawQuery(
          `CREATE INDEX ${PACKED_INDEX} ON table_cell_history (category_id, row_id) WHERE field_id = 0`
        )
    })
  }

  async down() {
    // Packed entries go back to one stored row each, at their ids.
    this.defer(async (db) => {
      const packed = await db.from('table_cell_history').where('field_id', 0)
      for (const stored of packed) {
        delete stored.entry_count
        const cells = JSON.parse(String(stored.new_value)) as [number, string, unknown][]
        const firstId = Number(stored.id) - cells.length + 1
        await db.from('table_cell_history').where('id', stored.id).delete()
        await db.table('table_cell_history').multiInsert(
          cells.map(([fieldId, fieldType, value], i) => ({
            ...stored,
            id: firstId + i,
            field_id: fieldId,
            field_type: fieldType,
            new_value: JSON.stringify(value),
          }))
        )
      }
      if (db.dialect.name.includes('sqlite'))
        await db.rawQuery(`DROP INDEX IF EXISTS ${PACKED_INDEX}`)
    })
    this.schema.alterTable('table_cell_history', (table) => {
      table.dropColumn('entry_count')
    })
  }
}
