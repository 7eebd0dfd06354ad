import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Builds the text indexes (substring search by index, services/text_index.ts) of existing
 * tables: one per plain text field, as a field created today gets. On SQLite each index is
 * built in one transaction (writes to that table wait for it: about a minute per million rows
 * and field); on MariaDB the gram table and its triggers come first, then the rows in batches
 * of 20,000 (writes wait for a batch at most; readers use the index once it is complete),
 * with the share of rows done shown every 10 % (10M rows: about 15 minutes per field on the
 * 2-core machine, tables README "MariaDB settings").
 * --drop removes them instead (a table whose writes matter more than its substring searches).
 * --field <id> (repeatable) limits either to those fields.
 */
export default class TablesIndexText extends BaseCommand {
  static commandName = 'tables:index-text'
  static description =
    "Build (or --drop) the trigram indexes that answer text fields' contains, begins-with and ends-with filters"
  static options: CommandOptions = { startApp: true }

  @args.spread({ description: 'Table ids (catId); every table when none', required: false })
  declare catIds?: string[]

  @flags.boolean({ description: 'Drop the indexes instead of building them' })
  declare drop?: boolean

  @flags.array({ description: 'Only the fields of these ids (repeat the flag for several)' })
  declare field?: string[]

  async run() {
    // Imported here: listing the commands must not load the application's services.
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { MetaService } = await import('../services/meta_service.js')
    const textIndex = await import('../services/text_index.js')
    const grams = await import('../services/text_index_mysql.js')
    const { isMysql } = await import('#core/native_sql')
    const everyTable = async () => {
      const rows = await db.from('table_categories').orderBy('id').select('id')
      return rows.map((row) => Number(row.id))
    }
    const ids = this.catIds?.length ? this.catIds.map(Number) : await everyTable()
    if (ids.some((id) => !Number.isInteger(id) || id <= 0)) {
      this.logger.error('Table ids are positive integers')
      this.exitCode = 1
      return
    }
    const only = this.field?.length ? new Set(this.field.map(Number)) : null
    if (only && [...only].some((id) => !Number.isInteger(id) || id <= 0)) {
      this.logger.error('Field ids are positive integers')
      this.exitCode = 1
      return
    }
    const meta = await this.app.container.make(MetaService)
    for (const id of ids) {
      const category = await meta.loadCategory(id)
      if (!category) {
        this.logger.error(`Table ${id} not found`)
        this.exitCode = 1
        continue
      }
      const fields = category.fields.filter(
        (field) => textIndex.isTextIndexable(field, field.column) && (!only || only.has(field.id))
      )
      if (this.drop) {
        if (only) for (const field of fields) await textIndex.dropTextIndex(id, field.column!)
        else await textIndex.dropTextIndexes(id)
        this.logger.success(
          `Table ${id} "${category.name}": text indexes dropped` +
            (only ? ` (${fields.map((field) => field.name).join(', ') || 'none'})` : '')
        )
        continue
      }
      for (const field of fields) {
        const started = performance.now()
        let shown = 0
        const progress = (done: number, total: number) => {
          const tenth = Math.floor((done / total) * 10)
          if (tenth <= shown || tenth >= 10) return
          shown = tenth
          const seconds = ((performance.now() - started) / 1000).toFixed(0)
          this.logger.info(`Table ${id}, field "${field.name}": ${tenth * 10} % (${seconds} s)`)
        }
        let built: boolean
        if (isMysql()) {
          built = await grams.createGramIndex(id, field.column!, progress)
          textIndex.forgetTextIndexes(id)
        } else built = await textIndex.createTextIndex(id, field.column!)
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        this.logger.success(
          `Table ${id} "${category.name}", field "${field.name}": ${built ? `indexed in ${seconds} s` : 'already indexed'}`
        )
      }
      if (fields.length === 0)
        this.logger.info(`Table ${id} "${category.name}": no text field to index`)
    }
  }
}
