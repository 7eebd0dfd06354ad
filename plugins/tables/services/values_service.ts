import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { BookAccessService } from '#plugins/books/services/book_access_service'
import { StampService } from '#core/services/stamp_service'
import { formatDateTime, rowTableName, serializeCell, type FieldDef } from '../lib/field_types.js'
import { BookTablesService } from './book_tables_service.js'
import { CommentsService } from './comments_service.js'
import { FieldEncryption, type UnlockedFields } from './field_encryption.js'
import { HistoryService } from './history_service.js'
import { FilterCompiler } from '../lib/filter_compiler.js'
import { MetaService, type CategoryMeta, type TabMeta } from './meta_service.js'
import { RowSelection, cellColumns, type Selection } from './row_selection.js'
import { TableAccess, type TableScope } from './table_access.js'
import {
  serializeField,
  serializePageColumns,
  serializeRowInfos,
} from '../serializers/table_serializer.js'

type Row = Record<string, any>
export type ValuesFormat = 'columns' | 'rows' | 'diff_ready_rows'

const DEFAULT_MAX_ROWS = 100

/** The options of a page read (getTableValues, getNamedTableValues). */
export interface PageInput {
  filterRowIds?: unknown
  tabId?: number
  offset?: number
  maxRows?: number
  format?: string
  getAllViews?: boolean
  getDependencies?: boolean
  maxComments?: number
  /** {fieldId: password}: encrypted fields shown in clear (FieldEncryption), others masked. */
  encryptedFieldPasswords?: unknown
}

/** `lastModifiedAfter` (unix seconds or a date) in the stored form of updated_at; null when not a date. */
function modifiedAfter(raw: string): string | null {
  const text = raw.trim()
  const date = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(text)
  return Number.isNaN(date.getTime()) ? null : formatDateTime(date)
}

/**
 * Reads of smart-table values: every filter, sort and page is done by SQL on
 * the category's row table (computed columns are stored, so link and lookup
 * columns cost nothing extra), and answers are shaped per `format`.
 */
@inject()
export class ValuesService {
  constructor(
    private stamps: StampService,
    private books: BookAccessService,
    private meta: MetaService,
    private comments: CommentsService,
    private access: TableAccess,
    private history: HistoryService,
    private rowSelection: RowSelection,
    private bookTables: BookTablesService,
    private encryption: FieldEncryption
  ) {}

  // ---- getTableValues -----------------------------------------------------

  /** getTableValues: a page of one table; reached through a link field (fromFieldId), that link is checked. */
  async tableValues(
    actor: Actor | null,
    input: PageInput & { catId: number; b_o?: string; fromFieldId?: number }
  ) {
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    if (input.fromFieldId) await this.checkLinkTo(scope, input.fromFieldId)
    return this.page(actor, scope, input)
  }

  /** getNamedTableValues: getTableValues naming the table and its fields by their sync codes. */
  async namedTableValues(
    actor: Actor | null,
    input: PageInput & { b_o: string; b_c: string; catCode: string; fieldCodes?: string }
  ) {
    const book = await this.books.resolve(input.b_o, input.b_c)
    const form = book ? await this.meta.formOfBook(book.id) : null
    const catId = form ? await this.meta.categoryByCode(form.id, input.catCode) : null
    if (!catId) throw rpcError('NOT_FOUND', `No table with code "${input.catCode}"`)
    const scope = await this.access.forCategory(actor, catId, 'read', input.b_o)
    const fieldIds = input.fieldCodes
      ? this.fieldIdsOfCodes(scope.category, input.fieldCodes)
      : null
    return this.page(actor, scope, { ...input, fieldIds })
  }

  /** The field that led a reader here must be a link to this table. */
  private async checkLinkTo(scope: TableScope, fromFieldId: number) {
    const fromCategory = await this.meta.categoryOfField(fromFieldId)
    const found = fromCategory ? await this.meta.category(fromCategory) : null
    const field = found?.category.fields.find((candidate) => candidate.id === fromFieldId)
    if (!field) throw rpcError('NOT_FOUND', `Field ${fromFieldId} not found`)
    if (field.type !== 'link' || Number(field.options.linkCatId) !== scope.category.id)
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter fromFieldId: field ${field.id} is not a link to table ${scope.category.id}`,
        { field: 'fromFieldId' }
      )
  }

  /**
   * Field ids of `code,code,...` (a field's code or fixed code), in that order. A sync code (the
   * spec's fieldCodes) wins over another field's fixed code: fixed codes are made from names, so
   * one field's "notes" may be another's sync code.
   */
  private fieldIdsOfCodes(category: CategoryMeta, codes: string): number[] {
    return codes
      .split(',')
      .map((code) => code.trim())
      .filter(Boolean)
      .map((code) => {
        const field =
          category.fields.find((candidate) => candidate.code === code) ??
          category.fields.find((candidate) => candidate.fixedCode === code)
        if (!field)
          throw rpcError(
            'INVALID_PARAMETER',
            `No field with code "${code}" in table "${category.name}"`
          )
        return field.id
      })
  }

  /** A page of a table whose scope the caller resolved; `fieldIds` chooses and orders the columns. */
  async page(
    actor: Actor | null,
    scope: TableScope,
    input: PageInput & { fieldIds?: number[] | null }
  ) {
    if (
      input.maxComments !== undefined &&
      input.maxComments !== null &&
      (!Number.isInteger(input.maxComments) || input.maxComments < 1 || input.maxComments > 10)
    )
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter maxComments: 1 to 10', {
        field: 'maxComments',
      })
    const sstamp = await this.stamps.watermark()
    const { category } = scope
    const format = this.format(input.format)
    if (input.tabId !== undefined && actor) await this.rememberTab(actor, scope, input.tabId)
    const fields = input.fieldIds
      ? input.fieldIds
          .map((id) => category.fields.find((field) => field.id === id)!)
          .filter(Boolean)
      : category.fields
    const unlocked = await this.encryption.unlock(
      category,
      input.encryptedFieldPasswords,
      actor?.user.id ?? null
    )
    const selection = await this.rowSelection.selection(scope, actor, input.filterRowIds)
    const offset = Math.max(0, input.offset ?? 0)
    const limit = input.getAllViews
      ? (input.maxRows ?? null)
      : Math.max(0, input.maxRows ?? DEFAULT_MAX_ROWS)
    const rows = await this.rowSelection.selectRows(category, selection, {
      offset,
      limit,
      columns: cellColumns(category),
    })
    this.encryption.reveal(category, rows, unlocked)
    const users = await this.comments.attach(
      category,
      fields,
      rows,
      actor?.user.id ?? null,
      input.maxComments ?? undefined
    )
    await this.history.attach(category, fields, rows)

    const tableValues: Record<string, unknown> = {
      id: category.id,
      ...this.shape(fields, rows, format),
    }
    if (input.getAllViews) {
      const ids = new Set(rows.map((row) => Number(row.id)))
      tableValues.views = await Promise.all(
        category.views.map(async (view) => {
          const compiled = new FilterCompiler(category.fields, {
            userCode: actor?.user.code ?? null,
          }).compile(view.filterGroup)
          const viewSelection: Selection = {
            where: [...selection.where, ...(compiled.where ? [compiled.where] : [])],
            orderBy: compiled.orderBy,
            onlyIds: selection.onlyIds,
          }
          const viewRowIds = await this.rowSelection.idsOf(category, viewSelection)
          return {
            id: view.id,
            name: view.name,
            rowIds: viewRowIds.filter((id) => ids.has(id)),
          }
        })
      )
    } else {
      tableValues.rowInfos = serializeRowInfos(rows, offset)
    }
    tableValues.rowInfosLength = rows.length
    if (input.getDependencies) tableValues.dependencies = this.dependencies(category)
    // With maxComments, comment cells carry their last comments and `users` their authors.
    if (input.maxComments) tableValues.users = users
    return { sstamp, catId: category.id, tableValues }
  }

  format(raw: unknown): ValuesFormat {
    const format = String(raw ?? '').trim() || 'columns'
    if (!['columns', 'rows', 'diff_ready_rows'].includes(format)) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter format: ${format} (columns, rows or diff_ready_rows)`
      )
    }
    return format as ValuesFormat
  }

  shape(fields: FieldDef[], rows: Row[], format: ValuesFormat) {
    if (format === 'rows') {
      return {
        fields: fields.map((field) => serializeField(field)),
        rows: rows.map((row) => {
          const cells: Record<string, unknown> = {}
          for (const field of fields) cells[field.name] = serializeCell(field, row)
          return { id: Number(row.id), fields: cells }
        }),
      }
    }
    if (format === 'diff_ready_rows') {
      const keyed: Record<string, Record<string, unknown>> = {}
      for (const row of rows) {
        const cells: Record<string, unknown> = {}
        for (const field of fields) cells[String(field.id)] = serializeCell(field, row).value
        keyed[String(row.id)] = cells
      }
      return {
        fields: fields.map((field) => serializeField(field)),
        rows: rows.length ? keyed : [],
      }
    }
    return { fields: serializePageColumns(fields, rows) }
  }

  dependencies(category: CategoryMeta): number[] {
    return [
      ...new Set(
        category.fields
          .filter((field) => field.type === 'link' && field.options.linkCatId)
          .map((field) => field.options.linkCatId!)
      ),
    ]
  }

  private async rememberTab(actor: Actor, scope: TableScope, tabId: number) {
    const tab: TabMeta | null = await this.meta.tab(tabId)
    if (!tab || tab.formId !== scope.form.id)
      throw rpcError('INVALID_PARAMETER', `Tab ${tabId} is not a tab of this book`)
    await this.meta.rememberTab(actor.user.id, scope.form.id, tab)
  }

  // ---- other reads --------------------------------------------------------

  /** computeTableOperation: `count` of the rows filterRowIds selects, by one SQL COUNT. */
  async compute(
    actor: Actor | null,
    input: { catId: number; b_o?: string; operation: string; filterRowIds?: unknown }
  ) {
    if (input.operation !== 'count')
      throw rpcError('INVALID_PARAMETER', `Unknown operation "${input.operation}" (only count)`)
    const sstamp = await this.stamps.watermark()
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const selection = await this.rowSelection.selection(scope, actor, input.filterRowIds)
    return {
      sstamp,
      catId: scope.category.id,
      result: await this.rowSelection.count(scope.category, selection),
    }
  }

  /**
   * listTableRowsById: rows of a table, through a view's filters when viewId
   * is given, only those modified after `lastModifiedAfter` (unix time or a
   * date) when it is a date.
   */
  async rowsById(
    actor: Actor | null,
    input: {
      catId: number
      b_o?: string
      viewId?: number
      format?: string
      maxRows?: number
      offset?: number
      lastModifiedAfter?: string
      encryptedFieldPasswords?: unknown
    }
  ) {
    const sstamp = await this.stamps.watermark()
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const unlocked = await this.encryption.unlock(
      scope.category,
      input.encryptedFieldPasswords,
      actor?.user.id ?? null
    )
    const selection = await this.rowSelection.selection(
      scope,
      actor,
      input.viewId ? { applyViewFilters: String(input.viewId) } : undefined
    )
    const after = input.lastModifiedAfter ? modifiedAfter(input.lastModifiedAfter) : null
    if (after) selection.where.push({ sql: 't.updated_at > ?', bindings: [after] })
    const format = this.format(input.format)
    const offset = input.offset ?? 0
    const rows = await this.rowSelection.selectRows(scope.category, selection, {
      offset,
      limit: input.maxRows || DEFAULT_MAX_ROWS,
    })
    this.encryption.reveal(scope.category, rows, unlocked)
    return {
      sstamp,
      catId: scope.category.id,
      tableValues: {
        id: scope.category.id,
        ...this.shape(scope.category.fields, rows, format),
        rowIds: rows.map((row) => Number(row.id)),
        rowInfos: serializeRowInfos(rows, offset),
        rowInfosLength: rows.length,
      },
    }
  }

  /** getTableRows (deprecated): a page of rows in the `rows` format, optionally with the table's structure. */
  async tableRows(
    actor: Actor | null,
    input: {
      catId: number
      b_o?: string
      rowIds?: number[]
      pageSize?: number
      page?: number
      getTableInfo?: boolean
      encryptedFieldPasswords?: unknown
    }
  ) {
    const sstamp = await this.stamps.watermark()
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const unlocked = await this.encryption.unlock(
      scope.category,
      input.encryptedFieldPasswords,
      actor?.user.id ?? null
    )
    const pageSize = input.pageSize || 100
    const page = Math.max(1, input.page || 1)
    const rowIds = input.rowIds ?? []
    const selection = { where: [], orderBy: [], onlyIds: rowIds.length ? rowIds : null }
    const rows = await this.rowSelection.selectRows(scope.category, selection, {
      offset: (page - 1) * pageSize,
      limit: pageSize,
    })
    this.encryption.reveal(scope.category, rows, unlocked)
    await this.history.attach(scope.category, scope.category.fields, rows)
    const out: Record<string, unknown> = {
      sstamp,
      catId: scope.category.id,
      rows: this.shape(scope.category.fields, rows, 'rows').rows,
      page,
      pageSize,
    }
    if (input.getTableInfo) {
      const bookTables = await this.bookTables.bookTables(actor, scope.book, {
        includeFields: true,
        includeEnums: true,
        android: true,
        getRowIds: true,
        externViews: false,
      })
      const categories = (bookTables?.categories ?? []) as { id: number }[]
      out.table = {
        ...bookTables,
        categories: categories.filter((category) => category.id === scope.category.id),
      }
    }
    return out
  }

  /** getTableValueSubset: cells of rows `rowIds` (in that order) and fields `fieldIds`. */
  async subset(
    actor: Actor | null,
    input: {
      catId: number
      b_o?: string
      fieldIds: number[]
      rowIds: number[]
      encryptedFieldPasswords?: unknown
    }
  ) {
    const sstamp = await this.stamps.watermark()
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const unlocked = await this.encryption.unlock(
      scope.category,
      input.encryptedFieldPasswords,
      actor?.user.id ?? null
    )
    const tableValues = await this.cells(scope, input.fieldIds, input.rowIds, unlocked)
    return { sstamp, catId: scope.category.id, tableValues }
  }

  /**
   * The lists of files of `files` cells, read without an actor: the media
   * plugin checks after a write which stored files a cell no longer lists.
   * Answers rowId -> fieldId -> list (rows that do not exist are absent), or
   * null when the table is gone.
   */
  async fileCells(categoryId: number, fieldIds: number[], rowIds: number[]) {
    const found = await this.meta.category(categoryId)
    if (!found) return null
    const fields = found.category.fields.filter(
      (field) => field.type === 'files' && fieldIds.includes(field.id)
    )
    const cells = new Map<number, Map<number, any[]>>()
    if (fields.length === 0) return cells
    for (let i = 0; i < rowIds.length; i += 1000) {
      const rows = await db.from(rowTableName(categoryId)).whereIn('id', rowIds.slice(i, i + 1000))
      for (const row of rows) {
        const byField = new Map<number, any[]>()
        for (const field of fields) {
          const value = serializeCell(field, row).value
          byField.set(field.id, Array.isArray(value) ? value : [])
        }
        cells.set(Number(row.id), byField)
      }
    }
    return cells
  }

  private async cells(
    scope: TableScope,
    fieldIds: number[],
    rowIds: number[],
    unlocked: UnlockedFields
  ) {
    const fields = fieldIds.map((id) => {
      const field = scope.category.fields.find((candidate) => candidate.id === id)
      if (!field)
        throw rpcError(
          'INVALID_PARAMETER',
          `Field ${id} is not a field of table "${scope.category.name}"`
        )
      return field
    })
    const byId = new Map<number, Row>()
    for (let i = 0; i < rowIds.length; i += 1000) {
      const rows = await db
        .from(rowTableName(scope.category.id))
        .whereIn('id', rowIds.slice(i, i + 1000))
      this.encryption.reveal(scope.category, rows, unlocked)
      for (const row of rows) byId.set(Number(row.id), row)
    }
    return rowIds
      .filter((id) => byId.has(id))
      .map((id) => fields.map((field) => serializeCell(field, byId.get(id)!).value))
  }
}
