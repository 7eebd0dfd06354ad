import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import db from '@adonisjs/lucid/services/db'
import { randomBytes } from 'node:crypto'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { BookAccessService, type BookRef } from '#plugins/books/services/book_access_service'
import {
  FIELD_TYPES,
  ROLLUP_FUNCTIONS,
  SYSTEM_COLUMNS,
  convertInput,
  hasSideTable,
  rowTableName,
  sideTableName,
  storageOf,
  type FieldDef,
  type FieldOptions,
  type FieldType,
} from '../lib/field_types.js'
import {
  FilterCompiler,
  normalizeGroup,
  type FilterGroupSpec,
  type FilterSpec,
} from '../lib/filter_compiler.js'
import { parseFormula } from '../lib/formula.js'
import '../events.js'
import { MetaService, toField, type CategoryMeta } from './meta_service.js'
import { RecomputeService } from './recompute_service.js'
import { RowWriter } from './row_writer.js'
import { SchemaService } from './schema_service.js'
import { TableAccess } from './table_access.js'
import { validateWire } from '#core/rpc/wire'
import { asIdList, asList, asObject, flagOr } from '../lib/wire.js'
import { fieldValidator } from '../validators/params.js'
import { assertFilterCount, assertRoomFor, settingJson } from '../lib/limits.js'
import { fixedCodeBase, fixedCodeCandidate } from '../lib/fixed_code.js'
import { triggerUrlHook } from '../lib/trigger_url_hook.js'

const fixedCode = (prefix: string) => `${prefix}${randomBytes(6).toString('hex')}`
const unix = () => Math.floor(Date.now() / 1000)
const invalid = (message: string) => rpcError('INVALID_PARAMETER', message)

/** How many rows of `table` have `column` = `id`. */
async function countOf(trx: TransactionClientContract, table: string, column: string, id: number) {
  const found = await trx.from(table).where(column, id).count('* as total').first()
  return Number(found?.total ?? 0)
}

/** Filters of a group, those of nested groups included. */
function countFilters(filters: FilterSpec[]): number {
  let count = 0
  for (const filter of filters) count += 1 + countFilters(filter.json.filters ?? [])
  return count
}

/** A field's definition as createField and updateField validate it (validators/params.ts). */
export interface FieldInput {
  b_o?: string
  name?: string
  type?: string
  code?: string
  description?: string
  readOnly?: boolean
  order?: number
  options?: Record<string, any>
}

/** updateTable's parameters. */
export interface TableInput {
  b_o?: string
  name?: string
  description?: string
  code?: string
  order?: number
  locked?: boolean
  rights?: Record<string, any>
  prefs?: Record<string, any>
  public?: boolean
  triggerUpdateUrl?: string
}

/** createView and updateView's parameters; the raw ones may be empty to clear the setting. */
export interface ViewInput {
  b_o?: string
  name?: string
  description?: string
  order?: number
  presentation?: string
  locked?: boolean
  filterGroup?: unknown
  card?: unknown
  calendar?: unknown
  hiddenFields?: unknown
}

/** createTab and updateTab's parameters (`view_id` or `viewId`; empty or 0 detaches the view). */
export interface TabInput {
  b_o?: string
  view_id?: unknown
  viewId?: unknown
  order?: number
  hidden?: boolean
}

/**
 * Structure management (extensions to the spec, see README.md): tables,
 * fields, views and tabs. Metadata is written in a stamped transaction; the
 * row tables' DDL runs after it (MariaDB commits DDL implicitly), and the
 * metadata is undone when the DDL fails.
 */
@inject()
export class StructureService {
  constructor(
    private stamps: StampService,
    private books: BookAccessService,
    private meta: MetaService,
    private recompute: RecomputeService,
    private writer: RowWriter,
    private schema: SchemaService,
    private access: TableAccess
  ) {}

  private async bump(trx: TransactionClientContract, categoryId: number, stamp: number) {
    await trx
      .from('table_categories')
      .where('id', categoryId)
      .update({ meta_version: stamp, sstamp: stamp, updated_at: unix() })
    this.meta.invalidate(categoryId)
  }

  /** The book's smart-table container, created on first use. */
  async ensureForm(trx: TransactionClientContract, book: BookRef, actor: Actor, stamp: number) {
    const existing = await this.meta.formOfBook(book.id, trx)
    if (existing) return existing.id
    const [id] = await trx.table('table_forms').insert({
      book_id: book.id,
      name: book.b_c,
      creator_id: actor.user.id,
      sstamp: stamp,
      updated_at: unix(),
    })
    return Number(id)
  }

  // ---- tables -------------------------------------------------------------

  /** createTable: in the book b_o/b_c, which the actor administers. */
  async createTableIn(
    actor: Actor,
    input: {
      b_o: string
      b_c: string
      name: string
      description?: string
      code?: string
      fields?: Record<string, unknown>[]
      public?: boolean
    }
  ) {
    const book = await this.books.resolveFor(actor, input.b_o, input.b_c, 'admin')
    return this.createTable(actor, book, { ...input, isPublic: input.public })
  }

  async createTable(
    actor: Actor,
    book: BookRef,
    input: {
      name: string
      description?: string
      code?: string
      fields?: Record<string, unknown>[]
      isPublic?: boolean
    }
  ) {
    // Initial fields are read by the rules createField reads its parameters with.
    const fieldInputs: FieldInput[] = []
    for (const raw of input.fields ?? [])
      fieldInputs.push(await validateWire<FieldInput>(fieldValidator, raw))
    const created = await this.stamps.write(async ({ trx, stamp }) => {
      const formId = await this.ensureForm(trx, book, actor, stamp)
      if (input.isPublic !== undefined)
        await trx.from('table_forms').where('id', formId).update({ is_public: input.isPublic })
      if (input.code) await this.assertFreeCode(trx, formId, input.code)
      assertRoomFor('tablesPerBook', await countOf(trx, 'table_categories', 'form_id', formId))
      const top = await trx
        .from('table_categories')
        .where('form_id', formId)
        .max('order as top')
        .first()
      const order = Number(top?.top ?? 0) + 1
      const [categoryId] = await trx.table('table_categories').insert({
        form_id: formId,
        name: input.name,
        description: input.description ?? null,
        code: input.code || null,
        fixed_code: fixedCode('c'),
        order,
        prefs: JSON.stringify({ link_presentation: 'text' }),
        meta_version: stamp,
        sstamp: stamp,
        updated_at: unix(),
      })
      const [viewId] = await trx.table('table_views').insert({
        category_id: categoryId,
        name: 'All',
        presentation: 'grid',
        order: 1,
        sstamp: stamp,
        updated_at: unix(),
      })
      const tabTop = await trx
        .from('table_tabs')
        .where('form_id', formId)
        .max('order as top')
        .first()
      const [tabId] = await trx.table('table_tabs').insert({
        form_id: formId,
        category_id: categoryId,
        view_id: viewId,
        order: Number(tabTop?.top ?? 0) + 1,
        sstamp: stamp,
        updated_at: unix(),
      })
      return { categoryId: Number(categoryId), viewId: Number(viewId), tabId: Number(tabId) }
    })
    try {
      await this.schema.createRowTable(created.categoryId)
    } catch (error) {
      await this.stamps.write(({ trx }) =>
        trx.from('table_categories').where('id', created.categoryId).delete()
      )
      throw error
    }
    for (const fieldInput of fieldInputs)
      await this.createField(actor, created.categoryId, fieldInput)
    return created
  }

  async updateTable(actor: Actor, categoryId: number, input: TableInput) {
    const { category, form } = await this.access.forCategory(actor, categoryId, 'admin', input.b_o)
    // The table's webhook for that URL first (webhooks plugin): a refused URL stores nothing.
    if (input.triggerUpdateUrl !== undefined)
      await triggerUrlHook.apply(actor, category.id, input.triggerUpdateUrl)
    await this.stamps.write(async ({ trx, stamp }) => {
      const changes: Record<string, unknown> = {}
      if (input.name !== undefined) {
        if (input.name.trim() === '') throw invalid('Invalid parameter name: empty')
        changes.name = input.name.trim()
      }
      if (input.description !== undefined) changes.description = input.description
      if (input.code !== undefined) {
        const code = input.code.trim()
        if (code) await this.assertFreeCode(trx, form.id, code, category.id)
        changes.code = code || null
      }
      if (input.order !== undefined) changes.order = input.order
      if (input.locked !== undefined) changes.locked = input.locked
      if (input.rights !== undefined) {
        const rights = input.rights
        if (rights.modify !== undefined) changes.rights_modify = flagOr(rights.modify, true)
        if (rights.select !== undefined)
          changes.rights_select = this.int(rights.select, 'rights.select')
      }
      if (input.prefs !== undefined) changes.prefs = settingJson(input.prefs, 'prefs')
      if (input.triggerUpdateUrl !== undefined)
        changes.trigger_update_url = input.triggerUpdateUrl || null
      if (Object.keys(changes).length)
        await trx.from('table_categories').where('id', category.id).update(changes)
      if (input.public !== undefined) {
        await trx
          .from('table_forms')
          .where('id', form.id)
          .update({ is_public: input.public, sstamp: stamp, updated_at: unix() })
      }
      await this.bump(trx, category.id, stamp)
    })
  }

  async deleteTable(actor: Actor, categoryId: number, b_o?: unknown) {
    const { category } = await this.access.forCategory(actor, categoryId, 'admin', b_o)
    const links = await db
      .from('table_fields')
      .where('type', 'link')
      .whereNot('category_id', category.id)
      .select('id', 'name', 'options')
    const linked = links.find(
      (row) => Number(JSON.parse(row.options ?? '{}').linkCatId) === category.id
    )
    if (linked)
      throw rpcError(
        'CONFLICT',
        `Field "${linked.name}" (${linked.id}) of another table links to this table: delete it first`
      )
    await this.stamps.write(async ({ trx }) => {
      await trx.from('table_categories').where('id', category.id).delete()
    })
    this.meta.invalidate(category.id)
    await this.schema.dropRowTable(category.id, category.fields)
    await emitter.emit('tables:fields_deleted', {
      categoryId: category.id,
      fieldIds: category.fields.map((field) => field.id),
      table: true,
    })
  }

  private async assertFreeCode(
    trx: TransactionClientContract,
    formId: number,
    code: string,
    except?: number
  ) {
    const query = trx.from('table_categories').where('form_id', formId).where('code', code)
    if (except) query.whereNot('id', except)
    if (await query.first())
      throw rpcError('CONFLICT', `Another table of this book has the code "${code}"`)
  }

  private int(value: unknown, name: string) {
    const number = Number(String(value).trim())
    if (!Number.isInteger(number)) throw invalid(`Invalid parameter ${name}: not an integer`)
    return number
  }

  // ---- fields -------------------------------------------------------------

  /** Validates type options against the table (links in the same book, lookups through this table's links). */
  private async fieldOptions(
    category: CategoryMeta,
    type: FieldType,
    given: Record<string, any> = {},
    previous: FieldOptions = {}
  ): Promise<FieldOptions> {
    const options: FieldOptions = { ...previous }
    if (given.values !== undefined) options.values = asList(given.values, 'values').map(String)
    if (given.enumColors !== undefined) {
      const colors = asObject(given.enumColors, 'enumColors')
      options.enumColors = {
        values: asList(colors.values, 'enumColors.values').map((item) => {
          const object = asObject(item, 'enumColors.values')
          return { value: String(object.value ?? ''), color: String(object.color ?? '') }
        }),
        strict: flagOr(colors.strict, false),
        displayColors: flagOr(colors.displayColors, true),
      }
    }
    if (given.strict !== undefined) {
      options.enumColors = {
        values: options.enumColors?.values ?? [],
        displayColors: options.enumColors?.displayColors ?? true,
        strict: flagOr(given.strict, false),
      }
    }
    if (options.enumColors && !options.values)
      options.values = options.enumColors.values.map((item) => item.value)
    for (const key of ['dateFormat', 'numformat', 'formula', 'template'] as const)
      if (given[key] !== undefined) options[key] = String(given[key])
    if (given.templateFormat !== undefined) {
      if (!['text', 'html'].includes(String(given.templateFormat)))
        throw invalid('options.templateFormat is text or html')
      options.templateFormat = String(given.templateFormat) as 'text' | 'html'
    }
    if (given.withTime !== undefined) options.withTime = flagOr(given.withTime, false)
    if (given.multiple !== undefined) options.multiple = flagOr(given.multiple, false)
    if (given.resultType !== undefined) {
      if (!['number', 'text'].includes(String(given.resultType)))
        throw invalid('options.resultType is number or text')
      options.resultType = String(given.resultType) as 'number' | 'text'
    }
    for (const key of ['linkCatId', 'linkFieldId', 'targetFieldId', 'linkViewId'] as const) {
      if (given[key] !== undefined) options[key] = this.int(given[key], `options.${key}`)
    }
    if (given.rollup !== undefined) {
      if (!ROLLUP_FUNCTIONS.includes(String(given.rollup) as any))
        throw invalid(`options.rollup is one of ${ROLLUP_FUNCTIONS.join(', ')}`)
      options.rollup = String(given.rollup) as any
    }

    if (type === 'link') {
      if (!options.linkCatId) throw invalid('A link field needs options.linkCatId')
      const target = await this.meta.category(options.linkCatId)
      if (!target || target.form.id !== category.formId)
        throw invalid(`options.linkCatId ${options.linkCatId} is not a table of this book`)
      // linkViewId (0: none) restricts the rows a link may point to (getReferenceFieldValues).
      if (options.linkViewId && !target.category.views.some((v) => v.id === options.linkViewId))
        throw invalid(`options.linkViewId ${options.linkViewId} is not a view of the linked table`)
    }
    if (type === 'lookup' || type === 'rollup') {
      const link = category.fields.find(
        (field) => field.id === options.linkFieldId && field.type === 'link'
      )
      if (!link) throw invalid('options.linkFieldId must name a link field of this table')
      const target = await this.meta.category(link.options.linkCatId!)
      const targetField = target?.category.fields.find(
        (field) => field.id === options.targetFieldId
      )
      if (!targetField && !(type === 'rollup' && options.rollup === 'count')) {
        throw invalid('options.targetFieldId must name a field of the linked table')
      }
      if (type === 'rollup' && !options.rollup) options.rollup = 'count'
    }
    if (type === 'formula') {
      try {
        parseFormula(options.formula ?? '')
      } catch (error) {
        throw invalid(`Invalid formula: ${(error as Error).message}`)
      }
      if (!options.resultType) options.resultType = 'number'
    }
    return options
  }

  private fieldType(raw: string | undefined): FieldType {
    const type = (raw ?? '').trim()
    if (!(FIELD_TYPES as readonly string[]).includes(type))
      throw invalid(`Unknown field type "${type}"`)
    return type as FieldType
  }

  async createField(actor: Actor, categoryId: number, input: FieldInput) {
    const { category } = await this.access.forCategory(actor, categoryId, 'admin', input.b_o)
    const name = (input.name ?? '').trim()
    if (!name) throw rpcError('MISSING_PARAMETER', 'Missing parameter: name')
    const type = this.fieldType(input.type)
    if (category.fields.some((field) => field.name.toLowerCase() === name.toLowerCase())) {
      throw rpcError('CONFLICT', `Table "${category.name}" already has a field named "${name}"`)
    }
    const options = await this.fieldOptions(category, type, input.options)
    const stored = storageOf({ type, options }) !== 'none' && !SYSTEM_COLUMNS[type]
    const fieldId = await this.stamps.write(async ({ trx, stamp }) => {
      // Bumped first: the table's row lock makes two fields created at once in one table pick
      // their fixed codes one after the other.
      await this.bump(trx, category.id, stamp)
      assertRoomFor(
        'fieldsPerTable',
        await countOf(trx, 'table_fields', 'category_id', category.id)
      )
      const top = await trx
        .from('table_fields')
        .where('category_id', category.id)
        .max('order as top')
        .first()
      const [id] = await trx.table('table_fields').insert({
        category_id: category.id,
        name,
        code: input.code || null,
        fixed_code: await this.freeFixedCode(trx, category.id, name),
        type,
        order: input.order ?? Number(top?.top ?? 0) + 1,
        description: input.description ?? null,
        read_only: input.readOnly ?? false,
        options: settingJson(options, 'options'),
        sstamp: stamp,
        updated_at: unix(),
      })
      if (stored)
        await trx
          .from('table_fields')
          .where('id', id)
          .update({ column_name: `f${id}` })
      return Number(id)
    })
    try {
      await this.schema.addField(
        category.id,
        { id: fieldId, type, options },
        stored ? `f${fieldId}` : null
      )
    } catch (error) {
      await this.stamps.write(async ({ trx, stamp }) => {
        await trx.from('table_fields').where('id', fieldId).delete()
        await this.bump(trx, category.id, stamp)
      })
      throw error
    }
    this.meta.invalidate(category.id)
    if (['lookup', 'rollup', 'formula', 'autoincrement'].includes(type))
      await this.fillComputed(category.id, fieldId)
    return fieldId
  }

  /**
   * The fixed code a new field named `name` gets (lib/fixed_code.ts): its name's code, suffixed
   * when another field of the table has it. Each candidate is checked by the database, so a code
   * its collation deems equal to a taken one (MariaDB compares without case) counts as taken.
   */
  private async freeFixedCode(trx: TransactionClientContract, categoryId: number, name: string) {
    const base = fixedCodeBase(name)
    // Ends: the candidates differ from each other, and a table holds a bounded number of fields.
    for (let attempt = 1; ; attempt++) {
      const candidate = fixedCodeCandidate(base, attempt)
      const taken = await trx
        .from('table_fields')
        .where('category_id', categoryId)
        .where('fixed_code', candidate)
        .select('id')
        .first()
      if (!taken) return candidate
    }
  }

  /** Computes a new computed column for existing rows (autoincrement: numbered in row order). */
  private async fillComputed(categoryId: number, fieldId: number) {
    const found = await this.meta.category(categoryId)
    const field = found?.category.fields.find((candidate) => candidate.id === fieldId)
    if (!field?.column) return
    if (field.type === 'autoincrement') {
      let next = 1
      let after = 0
      for (;;) {
        const page = await db
          .from(rowTableName(categoryId))
          .where('id', '>', after)
          .orderBy('id')
          .limit(2000)
          .select('id')
        const ids = page.map((row) => Number(row.id))
        if (!ids.length) return
        await this.stamps.write(async ({ trx }) => {
          for (const id of ids)
            await trx
              .from(rowTableName(categoryId))
              .where('id', id)
              .update({ [field.column!]: next++ })
        })
        after = ids[ids.length - 1]
      }
    }
    await this.recompute.recomputeAll(categoryId)
  }

  async field(fieldId: number): Promise<{ category: CategoryMeta; field: FieldDef }> {
    const categoryId = await this.meta.categoryOfField(fieldId)
    const found = categoryId ? await this.meta.category(categoryId) : null
    const field = found?.category.fields.find((candidate) => candidate.id === fieldId)
    if (!found || !field) throw rpcError('NOT_FOUND', `Field ${fieldId} not found`)
    return { category: found.category, field }
  }

  async updateField(actor: Actor, fieldId: number, input: FieldInput) {
    const { category, field } = await this.field(fieldId)
    await this.access.forCategory(actor, category.id, 'admin', input.b_o)
    const type = input.type ? this.fieldType(input.type) : field.type
    const options = await this.fieldOptions(
      category,
      type,
      input.options,
      type === field.type ? field.options : {}
    )
    const name = input.name !== undefined ? input.name.trim() : field.name
    if (!name) throw invalid('Invalid parameter name: empty')
    if (
      category.fields.some(
        (other) => other.id !== field.id && other.name.toLowerCase() === name.toLowerCase()
      )
    ) {
      throw rpcError('CONFLICT', `Table "${category.name}" already has a field named "${name}"`)
    }
    const oldStorage = SYSTEM_COLUMNS[field.type] ? 'none' : storageOf(field)
    const newStorage = SYSTEM_COLUMNS[type] ? 'none' : storageOf({ type, options })
    const rebuild =
      type !== field.type ||
      oldStorage !== newStorage ||
      hasSideTable(field) !== hasSideTable({ type, options })
    let newColumn = field.column
    if (rebuild) {
      // A type change: a new column (and side table), filled by converting every value, then the old one dropped.
      newColumn = newStorage === 'none' ? null : `f${field.id}_${Date.now().toString(36)}`
      const next: FieldDef = { ...field, type, options, column: newColumn }
      if (hasSideTable(field))
        await db
          .connection()
          .schema.renameTable(
            sideTableName(category.id, field.id),
            `${sideTableName(category.id, field.id)}_old`
          )
      await this.schema.addField(category.id, next, newColumn)
      await this.convertColumn(category, field, next)
      if (hasSideTable(field))
        await db
          .connection()
          .schema.dropTableIfExists(`${sideTableName(category.id, field.id)}_old`)
    }
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx
        .from('table_fields')
        .where('id', field.id)
        .update({
          name,
          type,
          options: settingJson(options, 'options'),
          column_name: newColumn,
          code: input.code !== undefined ? input.code || null : field.code,
          description: input.description ?? field.description,
          read_only: input.readOnly ?? field.readOnly,
          order: input.order ?? field.order,
          sstamp: stamp,
          updated_at: unix(),
        })
      await this.bump(trx, category.id, stamp)
    })
    if (rebuild && field.column) {
      await this.schema.dropColumns(
        category.id,
        field.type === 'link' ? [field.column, `${field.column}_t`] : [field.column]
      )
    }
    if (['lookup', 'rollup', 'formula', 'link'].includes(type) || rebuild)
      await this.recompute.recomputeAll(category.id)
  }

  /** Converts the values of a field into its new type; values that do not convert become empty. */
  private async convertColumn(category: CategoryMeta, from: FieldDef, to: FieldDef) {
    const table = rowTableName(category.id)
    const oldColumn = from.column ?? (SYSTEM_COLUMNS[from.type] as string | undefined)
    if (!oldColumn || !to.column) return
    const { displayText } = await import('../lib/field_types.js')
    let after = 0
    for (;;) {
      const rows = await db.from(table).where('id', '>', after).orderBy('id').limit(1000)
      if (!rows.length) return
      await this.stamps.write(async ({ trx }) => {
        const sideRows: { row_id: number; value: string | number; pos: number }[] = []
        for (const row of rows) {
          const source =
            from.type === 'link' || (from.type === 'enum' && from.options.multiple)
              ? JSON.parse(row[oldColumn] ?? '[]')
              : displayText(from, row)
          let converted
          try {
            converted = convertInput(
              to,
              Array.isArray(source) &&
                to.type !== 'link' &&
                !(to.type === 'enum' && to.options.multiple)
                ? source.join(', ')
                : source
            )
          } catch {
            converted = { value: null, list: [] }
          }
          await trx
            .from(table)
            .where('id', row.id)
            .update({ [to.column!]: converted.value })
          if (hasSideTable(to))
            (converted.list ?? []).forEach((value, pos) =>
              sideRows.push({ row_id: Number(row.id), value, pos })
            )
        }
        await this.writer.insertPlain(trx, sideTableName(category.id, to.id), sideRows)
      })
      after = Number(rows[rows.length - 1].id)
    }
  }

  async deleteField(actor: Actor, fieldId: number, b_o?: unknown) {
    const { category, field } = await this.field(fieldId)
    await this.access.forCategory(actor, category.id, 'admin', b_o)
    const dependents = await db
      .from('table_fields')
      .whereIn('type', ['lookup', 'rollup'])
      .select('id', 'name', 'options')
    const dependent = dependents.find(
      (row) =>
        Number(JSON.parse(row.options ?? '{}').linkFieldId) === field.id ||
        Number(JSON.parse(row.options ?? '{}').targetFieldId) === field.id
    )
    if (dependent)
      throw rpcError(
        'CONFLICT',
        `Field "${dependent.name}" (${dependent.id}) reads this field: delete it first`
      )
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('table_filters').where('field_id', field.id).delete()
      await trx.from('table_fields').where('id', field.id).delete()
      await this.bump(trx, category.id, stamp)
    })
    await this.schema.dropField(category.id, field)
    await emitter.emit('tables:fields_deleted', {
      categoryId: category.id,
      fieldIds: [field.id],
      table: false,
    })
  }

  // ---- views --------------------------------------------------------------

  private async writeFilterGroup(
    trx: TransactionClientContract,
    viewId: number,
    group: FilterGroupSpec | null
  ) {
    await trx.from('table_filter_groups').where('view_id', viewId).delete()
    if (!group) return
    const [groupId] = await trx
      .table('table_filter_groups')
      .insert({ view_id: viewId, operator: group.operator, updated_at: unix() })
    let order = 0
    for (const filter of group.filters) {
      await trx.table('table_filters').insert({
        group_id: groupId,
        field_id: filter.field_id,
        filter_type: filter.filter_type,
        json: JSON.stringify(
          filter.filter_type === 'group'
            ? { operator: filter.json.operator, filters: filter.json.filters }
            : { predicate: filter.json.predicate, operand: filter.json.operand ?? null }
        ),
        order: order++,
        updated_at: unix(),
      })
    }
  }

  /** Validates a filter group by compiling it; returns it with the fields it uses (for indexes). */
  private checkGroup(category: CategoryMeta, raw: unknown) {
    if (raw === undefined || raw === '' || raw === null)
      return { group: null, used: [] as FieldDef[] }
    const group = normalizeGroup(raw)
    assertFilterCount(countFilters(group.filters))
    settingJson(group, 'filterGroup')
    const compiled = new FilterCompiler(category.fields, { userCode: null }).compile(group)
    return { group, used: compiled.usedFields }
  }

  private viewColumns(input: ViewInput) {
    const changes: Record<string, unknown> = {}
    if (input.name !== undefined) changes.name = input.name.trim()
    if (input.description !== undefined) changes.description = input.description
    if (input.presentation !== undefined) {
      const presentation = input.presentation
      if (!['grid', 'card', 'calendar', 'form', 'kanban', 'gallery'].includes(presentation))
        throw invalid(`Unknown presentation "${presentation}"`)
      changes.presentation = presentation
    }
    if (input.locked !== undefined) changes.locked = input.locked
    if (input.order !== undefined) changes.order = input.order
    if (input.card !== undefined) changes.card = settingJson(asObject(input.card, 'card'), 'card')
    if (input.calendar !== undefined)
      changes.calendar = settingJson(asObject(input.calendar, 'calendar'), 'calendar')
    if (input.hiddenFields !== undefined)
      changes.hidden_fields = settingJson(
        asIdList(input.hiddenFields, 'hiddenFields'),
        'hiddenFields'
      )
    return changes
  }

  async createView(actor: Actor, categoryId: number, input: ViewInput) {
    const { category } = await this.access.forCategory(actor, categoryId, 'admin', input.b_o)
    if (!(input.name ?? '').trim()) throw rpcError('MISSING_PARAMETER', 'Missing parameter: name')
    const { group, used } = this.checkGroup(category, input.filterGroup)
    const viewId = await this.stamps.write(async ({ trx, stamp }) => {
      assertRoomFor('viewsPerTable', await countOf(trx, 'table_views', 'category_id', category.id))
      const top = await trx
        .from('table_views')
        .where('category_id', category.id)
        .max('order as top')
        .first()
      const [id] = await trx.table('table_views').insert({
        category_id: category.id,
        order: Number(top?.top ?? 0) + 1,
        ...this.viewColumns(input),
        sstamp: stamp,
        updated_at: unix(),
      })
      await this.writeFilterGroup(trx, Number(id), group)
      await this.bump(trx, category.id, stamp)
      return Number(id)
    })
    await this.indexFields(category.id, used)
    return viewId
  }

  private async view(viewId: number) {
    const categoryId = await this.meta.categoryOfView(viewId)
    if (!categoryId) throw rpcError('NOT_FOUND', `View ${viewId} not found`)
    return categoryId
  }

  async updateView(actor: Actor, viewId: number, input: ViewInput) {
    const { category } = await this.access.forCategory(
      actor,
      await this.view(viewId),
      'admin',
      input.b_o
    )
    const { group, used } = this.checkGroup(category, input.filterGroup)
    await this.stamps.write(async ({ trx, stamp }) => {
      const changes = this.viewColumns(input)
      if (changes.name === '') throw invalid('Invalid parameter name: empty')
      await trx
        .from('table_views')
        .where('id', viewId)
        .update({ ...changes, sstamp: stamp, updated_at: unix() })
      if (input.filterGroup !== undefined) await this.writeFilterGroup(trx, viewId, group)
      await this.bump(trx, category.id, stamp)
    })
    await this.indexFields(category.id, used)
  }

  async deleteView(actor: Actor, viewId: number, b_o?: unknown) {
    const { category } = await this.access.forCategory(actor, await this.view(viewId), 'admin', b_o)
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('table_views').where('id', viewId).delete()
      await this.bump(trx, category.id, stamp)
    })
  }

  /** Saved views filter and sort through indexes. */
  private async indexFields(categoryId: number, fields: FieldDef[]) {
    const seen = new Set<number>()
    for (const field of fields) {
      if (seen.has(field.id)) continue
      seen.add(field.id)
      const column = field.column ?? SYSTEM_COLUMNS[field.type]
      if (column) await this.schema.ensureIndex(categoryId, field, column)
    }
  }

  // ---- tabs ---------------------------------------------------------------

  async createTab(actor: Actor, categoryId: number, input: TabInput) {
    const { category, form } = await this.access.forCategory(actor, categoryId, 'admin', input.b_o)
    const viewId = this.optionalView(category, input.view_id ?? input.viewId)
    return this.stamps.write(async ({ trx, stamp }) => {
      assertRoomFor('tabsPerTable', await countOf(trx, 'table_tabs', 'category_id', category.id))
      const top = await trx.from('table_tabs').where('form_id', form.id).max('order as top').first()
      const [id] = await trx.table('table_tabs').insert({
        form_id: form.id,
        category_id: category.id,
        view_id: viewId ?? null,
        order: input.order ?? Number(top?.top ?? 0) + 1,
        hidden: input.hidden ?? false,
        sstamp: stamp,
        updated_at: unix(),
      })
      await trx
        .from('table_forms')
        .where('id', form.id)
        .update({ sstamp: stamp, updated_at: unix() })
      return Number(id)
    })
  }

  private optionalView(category: CategoryMeta, raw: unknown): number | null | undefined {
    if (raw === undefined) return undefined
    if (raw === '' || raw === null || raw === '0') return null
    const id = this.int(raw, 'view_id')
    if (!category.views.some((view) => view.id === id))
      throw invalid(`View ${id} is not a view of table "${category.name}"`)
    return id
  }

  private async tabScope(actor: Actor, tabId: number, b_o?: unknown) {
    const tab = await this.meta.tab(tabId)
    if (!tab) throw rpcError('NOT_FOUND', `Tab ${tabId} not found`)
    const scope = await this.access.forCategory(actor, tab.categoryId, 'admin', b_o)
    return { tab, ...scope }
  }

  async updateTab(actor: Actor, tabId: number, input: TabInput) {
    const { tab, category } = await this.tabScope(actor, tabId, input.b_o)
    const viewId = this.optionalView(category, input.view_id ?? input.viewId)
    await this.stamps.write(async ({ trx, stamp }) => {
      const changes: Record<string, unknown> = { sstamp: stamp, updated_at: unix() }
      if (viewId !== undefined) changes.view_id = viewId
      if (input.order !== undefined) changes.order = input.order
      if (input.hidden !== undefined) changes.hidden = input.hidden
      await trx.from('table_tabs').where('id', tab.id).update(changes)
      await trx
        .from('table_forms')
        .where('id', tab.formId)
        .update({ sstamp: stamp, updated_at: unix() })
    })
  }

  async deleteTab(actor: Actor, tabId: number, b_o?: unknown) {
    const { tab } = await this.tabScope(actor, tabId, b_o)
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('table_tabs').where('id', tab.id).delete()
      await trx
        .from('table_forms')
        .where('id', tab.formId)
        .update({ sstamp: stamp, updated_at: unix() })
    })
  }
}

export { toField }
