import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Smart-table metadata. Row data does not live here: each category gets its
 * own SQL table (`tt_<categoryId>`, created by the tables schema service).
 */
export default class extends BaseSchema {
  async up() {
    // The bookTables container (fpForm): one per book.
    this.schema.createTable('table_forms', (table) => {
      table.increments('id')
      table
        .integer('book_id')
        .unsigned()
        .notNullable()
        .unique()
        .references('id')
        .inTable('books')
        .onDelete('CASCADE')
      table.string('name', 191).notNullable().defaultTo('')
      table.text('description').nullable()
      table.integer('creator_id').unsigned().nullable()
      table.boolean('is_public').notNullable().defaultTo(false)
      table.boolean('is_system').notNullable().defaultTo(false)
      table.boolean('rights_modify').notNullable().defaultTo(true)
      table.integer('rights_select').notNullable().defaultTo(1)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
    })

    this.schema.createTable('table_categories', (table) => {
      table.increments('id')
      table
        .integer('form_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_forms')
        .onDelete('CASCADE')
      table.string('name', 191).notNullable()
      table.text('description').nullable()
      table.string('code', 191).nullable()
      table.string('fixed_code', 64).notNullable().unique()
      table.integer('order').notNullable().defaultTo(0)
      table.boolean('locked').notNullable().defaultTo(false)
      table.boolean('rights_modify').notNullable().defaultTo(true)
      table.integer('rights_select').notNullable().defaultTo(1)
      table.string('sys_func', 64).nullable()
      table.string('trigger_update_url', 1024).nullable()
      table.text('prefs').nullable()
      /** Bumped on every structure change: the in-process metadata cache keys on it. */
      table.bigInteger('meta_version').notNullable().defaultTo(0)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['form_id', 'order'])
    })

    this.schema.createTable('table_fields', (table) => {
      table.increments('id')
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table.string('name', 191).notNullable()
      table.string('code', 191).nullable()
      table.string('fixed_code', 64).notNullable().unique()
      table.string('type', 32).notNullable()
      table.integer('order').notNullable().defaultTo(0)
      table.text('description').nullable()
      table.boolean('read_only').notNullable().defaultTo(false)
      /** Type options: values, dateFormat, numformat, enumColors, multiple, link and formula settings. */
      table.text('options').nullable()
      /** The physical column in tt_<categoryId> (changes when a type change rebuilds it); null when computed from system columns. */
      table.string('column_name', 64).nullable()
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['category_id', 'order'])
    })

    this.schema.createTable('table_views', (table) => {
      table.increments('id')
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table.string('name', 191).notNullable()
      table.text('description').nullable()
      table.string('presentation', 32).notNullable().defaultTo('grid')
      table.boolean('locked').notNullable().defaultTo(false)
      table.integer('order').notNullable().defaultTo(0)
      table.text('card').nullable()
      table.text('calendar').nullable()
      table.text('hidden_fields').nullable()
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['category_id', 'order'])
    })

    this.schema.createTable('table_filter_groups', (table) => {
      table.increments('id')
      table
        .integer('view_id')
        .unsigned()
        .notNullable()
        .unique()
        .references('id')
        .inTable('table_views')
        .onDelete('CASCADE')
      table.string('operator', 3).notNullable().defaultTo('and')
      table.bigInteger('updated_at').notNullable().defaultTo(0)
    })

    this.schema.createTable('table_filters', (table) => {
      table.increments('id')
      table
        .integer('group_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_filter_groups')
        .onDelete('CASCADE')
      /** Null for a nested group (filter_type 'group', json holds {operator, filters}). */
      table.integer('field_id').unsigned().nullable()
      table.string('filter_type', 32).notNullable().defaultTo('text')
      table.text('json').nullable()
      table.integer('order').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['group_id', 'order'])
    })

    this.schema.createTable('table_tabs', (table) => {
      table.increments('id')
      table
        .integer('form_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_forms')
        .onDelete('CASCADE')
      table
        .integer('category_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_categories')
        .onDelete('CASCADE')
      table
        .integer('view_id')
        .unsigned()
        .nullable()
        .references('id')
        .inTable('table_views')
        .onDelete('SET NULL')
      table.integer('order').notNullable().defaultTo(0)
      table.boolean('hidden').notNullable().defaultTo(false)
      table.bigInteger('sstamp').notNullable().defaultTo(0)
      table.bigInteger('updated_at').notNullable().defaultTo(0)
      table.index(['form_id', 'order'])
    })

    // What each user last looked at (lastTabId, selectedViewId): UI state, not synced data.
    this.schema.createTable('table_user_states', (table) => {
      table.integer('user_id').unsigned().notNullable()
      table
        .integer('form_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('table_forms')
        .onDelete('CASCADE')
      table.integer('last_tab_id').unsigned().nullable()
      table.text('selected_views').nullable()
      table.primary(['user_id', 'form_id'])
    })
  }

  async down() {
    for (const name of [
      'table_user_states',
      'table_tabs',
      'table_filters',
      'table_filter_groups',
      'table_views',
      'table_fields',
      'table_categories',
      'table_forms',
    ]) {
      this.schema.dropTableIfExists(name)
    }
  }
}
