import Database from 'better-sqlite3'

/** How long one reading of the file's shadow tables serves (one migration:fresh asks per table). */
const READING_MS = 1000

/**
 * The shadow tables of an SQLite file's virtual tables (a text index's FTS5 `_data`, `_idx`,
 * `_content`, `_docsize` and `_config`), as the list of tables Lucid's dropAllTables
 * (`migration:fresh`, `db:wipe`) leaves alone: dropping the virtual table takes them along.
 * Lucid drops every table sqlite_master lists, so it dropped a text index, then failed on its
 * shadows ("no such table: tt_1_fts_f1_config"). Lucid asks `includes` for each table
 * before dropping any; the answer is read from the file then (`PRAGMA table_list` types them
 * 'shadow'), on a read-only connection of its own.
 */
export class SqliteShadowTables extends Array<string> {
  // Copies made by Array's own methods are plain arrays (they would call the constructor with a length).
  static override get [Symbol.species]() {
    return Array
  }

  private reading: { at: number; names: Set<string> } | null = null

  constructor(private file: string) {
    super()
  }

  override includes(name: string): boolean {
    if (!this.reading || Date.now() - this.reading.at > READING_MS)
      this.reading = { at: Date.now(), names: this.read() }
    return this.reading.names.has(name)
  }

  private read(): Set<string> {
    let connection: Database.Database | null = null
    try {
      connection = new Database(this.file, { readonly: true, fileMustExist: true })
      const tables = connection.pragma('table_list') as { name: string; type: string }[]
      return new Set(tables.filter((table) => table.type === 'shadow').map((table) => table.name))
    } catch {
      return new Set() // no file yet: nothing to leave
    } finally {
      connection?.close()
    }
  }
}
