import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import settings from '#core/settings/main'
import { quoteId } from '#core/native_sql'
import type { Knex } from 'knex'
import {
  hasSideTable,
  kindOf,
  linkTextColumn,
  rowTableName,
  sideTableName,
  storageOf,
  type FieldDef,
} from '../lib/field_types.js'
import { createTextIndex, dropTextIndex, dropTextIndexes, isTextIndexable } from './text_index.js'
import { dropCountersOn, forgetCounters } from './row_counters.js'

/** The row table's columns of a field stored in `column` (a link also has its caption's). */
const fieldColumns = (field: Pick<FieldDef, 'type'>, column: string) =>
  field.type === 'link' ? [column, linkTextColumn(column)] : [column]

/** Row ids are global: category c owns ids c * ROW_ID_SPACE + 1 ... (b_o and catId are inferred from a rowId). */
export const ROW_ID_SPACE = 2 ** 32

export const categoryOfRowId = (rowId: number) => Math.floor(rowId / ROW_ID_SPACE)

const isMysql = () => db.connection().dialect.name === 'mysql'

/**
 * DDL of the per-category row tables, through the schema builder. MariaDB
 * commits implicitly around DDL, so these run outside write transactions:
 * callers write metadata first, then change the schema, and undo the metadata
 * when the DDL fails.
 */
@inject()
export class SchemaService {
  private schema() {
    return db.connection().schema
  }

  async createRowTable(categoryId: number) {
    const name = rowTableName(categoryId)
    await this.schema().createTable(name, (table) => {
      table.bigIncrements('id').primary()
      table.double('ord').notNullable().defaultTo(0)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.string('created_at', 19).nullable()
      table.string('updated_at', 19).nullable()
      table.string('created_by', 191).nullable()
      table.string('updated_by', 191).nullable()
      table.index(['ord', 'id'], `${name}_ord_idx`)
    })
    // Start the id sequence inside this category's id space.
    const start = categoryId * ROW_ID_SPACE
    if (isMysql()) {
      await db.rawQuery(`ALTER TABLE \`${name}\` AUTO_INCREMENT = ${start + 1}`)
    } else {
      await db.rawQuery('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)', [name, start])
    }
  }

  async dropRowTable(categoryId: number, fields: FieldDef[]) {
    await dropTextIndexes(categoryId)
    for (const field of fields) {
      if (hasSideTable(field))
        await this.schema().dropTableIfExists(sideTableName(categoryId, field.id))
    }
    await this.schema().dropTableIfExists(rowTableName(categoryId))
    await forgetCounters(categoryId)
  }

  private addColumn(
    table: Knex.AlterTableBuilder,
    column: string,
    field: Pick<FieldDef, 'type' | 'options'>
  ) {
    switch (storageOf(field)) {
      case 'string':
        table.string(column, 255).nullable()
        break
      case 'text':
        table.text(column, 'mediumtext').nullable()
        break
      case 'double':
        table.double(column).nullable()
        break
      case 'bigint':
        table.bigInteger(column).nullable()
        break
      case 'boolean':
        table.boolean(column).notNullable().defaultTo(false)
        break
      case 'date':
        table.string(column, 19).nullable()
        break
      case 'none':
        break
    }
  }

  /** Adds the field's column(s) and side table; `column` may differ from field.column during a type change. */
  async addField(
    categoryId: number,
    field: Pick<FieldDef, 'id' | 'type' | 'options'>,
    column: string | null
  ) {
    if (column) {
      await this.schema().alterTable(rowTableName(categoryId), (table) => {
        this.addColumn(table, column, field)
        if (field.type === 'link') table.text(linkTextColumn(column), 'mediumtext').nullable()
      })
      // Substring search by index (services/text_index.ts): built empty, kept by triggers;
      // unless the operator turned it off for new fields (setting tables.textIndex).
      if (settings.boolean('tables.textIndex') && isTextIndexable(field, column))
        await createTextIndex(categoryId, column)
    }
    if (hasSideTable(field)) {
      const link = field.type === 'link'
      const name = sideTableName(categoryId, field.id)
      await this.schema().dropTableIfExists(name)
      await this.createSideTable(name, link)
    }
  }

  /**
   * A multi-valued field's side table: a row's values (row_id, value, their position), keyed
   * by (row_id, value), with an index by value (filters, and the rows linking to a row). On
   * SQLite WITHOUT ROWID: the key's B-tree holds the rows, where a rowid table kept them in a
   * third one (the rowid's) beside the key's own index. A bulk write of linked rows inserted
   * into three B-trees per link: 7.0-7.7 us a row with its commit against 4.7-5.5, and half the
   * size (1,000-row transactions, 200,000 rows). InnoDB already keeps rows in the key's order.
   */
  private async createSideTable(name: string, link: boolean) {
    if (isMysql()) {
      await this.schema().createTable(name, (table) => {
        table.bigInteger('row_id').notNullable()
        if (link) table.bigInteger('value').notNullable()
        else table.string('value', 255).notNullable()
        table.integer('pos').notNullable().defaultTo(0)
        table.primary(['row_id', 'value'])
        table.index(['value', 'row_id'], `${name}_value_idx`)
      })
      return
    }
    const table = quoteId(name)
    await db.rawQuery(
      `CREATE TABLE ${table} ("row_id" bigint not null, "value" ${link ? 'bigint' : 'varchar(255)'} not null,` +
        ` "pos" integer not null default '0', primary key ("row_id", "value")) WITHOUT ROWID`
    )
    await db.rawQuery(
      `CREATE INDEX ${quoteId(`${name}_value_idx`)} ON ${table} ("value", "row_id")`
    )
  }

  async dropField(
    categoryId: number,
    field: Pick<FieldDef, 'id' | 'type' | 'options' | 'column'>,
    column = field.column
  ) {
    if (hasSideTable(field))
      await this.schema().dropTableIfExists(sideTableName(categoryId, field.id))
    if (!column) return
    await this.dropColumns(categoryId, fieldColumns(field, column))
  }

  /**
   * Before a field's column goes (deleted, or replaced by a type change): drops the counters
   * that read it while nothing has changed yet, so that a counter whose lock stays busy fails
   * the operation cleanly (dropColumns drops them again, for one made in between).
   */
  async releaseColumn(categoryId: number, field: Pick<FieldDef, 'type' | 'column'>) {
    if (field.column) await dropCountersOn(categoryId, fieldColumns(field, field.column))
  }

  /** Drops columns only (a type change keeps the field's new side table). */
  async dropColumns(categoryId: number, columns: string[]) {
    // A counter's triggers read its columns: SQLite refuses the drop, MariaDB's writes would fail.
    await dropCountersOn(categoryId, columns)
    for (const column of columns) {
      await this.dropIndexes(categoryId, column)
      await dropTextIndex(categoryId, column)
    }
    if (isMysql()) {
      await this.schema().alterTable(rowTableName(categoryId), (table) => {
        for (const column of columns) table.dropColumn(column)
      })
      return
    }
    // SQLite's own DROP COLUMN: knex's copies the table into a new one, which loses its
    // triggers (the other columns' text indexes).
    for (const column of columns)
      await db.rawQuery(`ALTER TABLE "${rowTableName(categoryId)}" DROP COLUMN "${column}"`)
  }

  private indexName(categoryId: number, column: string) {
    return `${rowTableName(categoryId)}_${column}_vidx`
  }

  /** An index for a column that a saved view filters or sorts on (idempotent). */
  async ensureIndex(categoryId: number, field: FieldDef, column: string) {
    const kind = kindOf(field)
    if (kind === 'files' || kind === 'none' || kind === 'link' || kind === 'multi') return
    const table = rowTableName(categoryId)
    const name = this.indexName(categoryId, column)
    if (isMysql()) {
      const prefix = storageOf(field) === 'text' ? '(191)' : ''
      await db.rawQuery(
        `CREATE INDEX IF NOT EXISTS \`${name}\` ON \`${table}\` (\`${column}\`${prefix}, \`ord\`, \`id\`)`
      )
    } else {
      // (column, ord, id): an equality filter then reads its page already in row order, without sorting.
      await db.rawQuery(
        `CREATE INDEX IF NOT EXISTS "${name}" ON "${table}" ("${column}", "ord", "id")`
      )
    }
  }

  private async dropIndexes(categoryId: number, column: string) {
    const table = rowTableName(categoryId)
    const name = this.indexName(categoryId, column)
    if (isMysql()) await db.rawQuery(`DROP INDEX IF EXISTS \`${name}\` ON \`${table}\``)
    else await db.rawQuery(`DROP INDEX IF EXISTS "${name}"`)
  }
}
