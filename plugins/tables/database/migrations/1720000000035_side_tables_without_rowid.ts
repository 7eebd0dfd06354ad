import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/** Side tables of multi-valued fields: `tt_<category>_m<field>` (not a type change's `_old`). */
const SIDE_TABLES =
  "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name GLOB 'tt_*_m*'"
const SIDE_TABLE_NAME = /^tt_\d+_m\d+$/
/** The end of a CREATE TABLE statement of a WITHOUT ROWID table. */
const WITHOUT_ROWID_END = /\)\s*WITHOUT\s+ROWID\s*$/i

/**
 * On SQLite, the side tables of multi-valued fields become WITHOUT ROWID tables (see
 * SchemaService.createSideTable, which makes new ones so): each is rebuilt with the same columns
 * and key, its rows copied, its value index made again. MariaDB's are unchanged (InnoDB keeps
 * rows in their key's order already). Down rebuilds them as rowid tables.
 */
export default class extends BaseSchema {
  async up() {
    this.defer((db) => rebuildSideTables(db, true))
  }

  async down() {
    this.defer((db) => rebuildSideTables(db, false))
  }
}

async function rebuildSideTables(db: QueryClientContract, withoutRowid: boolean) {
  if (!db.dialect.name.includes('sqlite')) return
  const tables = (await db.rawQuery(SIDE_TABLES)) as { name: string; sql: string }[]
  for (const { name, sql } of tables) {
    if (!SIDE_TABLE_NAME.test(name)) continue
    const isWithoutRowid = WITHOUT_ROWID_END.test(sql)
    if (isWithoutRowid === withoutRowid) continue
    // The same columns and key as the table's own CREATE statement, under a temporary name.
    const body = sql.slice(sql.indexOf('(')).replace(WITHOUT_ROWID_END, ')')
    const rebuilt = `${name}_rebuilt`
    await db.rawQuery(`DROP TABLE IF EXISTS "${rebuilt}"`)
    await db.rawQuery(`CREATE TABLE "${rebuilt}" ${body}${withoutRowid ? ' WITHOUT ROWID' : ''}`)
    await db.rawQuery(
      `INSERT INTO "${rebuilt}" ("row_id", "value", "pos") SELECT "row_id", "value", "pos" FROM "${name}"`
    )
    await db.rawQuery(`DROP TABLE "${name}"`)
    await db.rawQuery(`ALTER TABLE "${rebuilt}" RENAME TO "${name}"`)
    await db.rawQuery(`CREATE INDEX "${name}_value_idx" ON "${name}" ("value", "row_id")`)
  }
}
