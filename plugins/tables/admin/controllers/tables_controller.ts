import { Readable } from 'node:stream'
import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { UserService } from '#core/services/user_service'
import { RpcError } from '#core/rpc/errors'
import type { Actor } from '#core/rpc/base_operation'
import { consoleActor } from '#admin/actor'
import { refusalAsFormError, validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import { TableDirectory } from '../table_directory.js'
import { GridFeed, GRID_CHANNEL } from '../grid_feed.js'
import {
  gridColumn,
  gridQuery,
  PAGE_SIZES,
  searchedFields,
  selectionOf,
  type GridQuery,
} from '../grid_query.js'
import { GridSearch, type BuiltIndex } from '../grid_search.js'
import { csvLine, csvFileName } from '../csv.js'
import { cellDisplay, changeDisplay } from '../grid_cells.js'
import { ValuesService } from '../../services/values_service.js'
import { RowsService } from '../../services/rows_service.js'
import { CommentsService } from '../../services/comments_service.js'
import { HistoryService } from '../../services/history_service.js'
import { TableAccess } from '../../services/table_access.js'
import { TableExport } from '../../services/table_export.js'
import { RowSelection } from '../../services/row_selection.js'
import { sqlColumnOf } from '../../lib/field_types.js'
import { categoryOfRowId, ROW_ID_SPACE } from '../../services/schema_service.js'

const BOOKS_PER_PAGE = 20
/** Changes the row panel shows (newest first). */
const PANEL_CHANGES = 20

const cellEdit = vine.compile(
  vine.object({
    rowId: vine
      .string()
      .trim()
      .regex(/^\d{1,20}$/),
    fieldId: vine.number().withoutDecimals().positive(),
    value: vine.string().maxLength(100_000).nullable().optional(),
  })
)

type Found = NonNullable<Awaited<ReturnType<TableDirectory['table']>>>

/**
 * The tables plugin's console pages (/admin/tables): per book its tables with their fields,
 * views and row counts; one table's grid. The grid reads through the services behind
 * getTableValues (ValuesService.tableValues and compute, their filterRowIds compiled by the
 * view filter compiler), as the book's owner on the administrator's behalf; it edits a cell
 * through RowsService.updateValue, the method behind updateTableValue, as the administrator
 * themselves (their right in the book decides; the cell's history and the table's realtime
 * follow as for any write); its row panel reads CommentsService and HistoryService, and its
 * CSV export TableExport, a page at a time onto the response.
 */
@inject()
export default class TablesController {
  constructor(
    private directory: TableDirectory,
    private values: ValuesService,
    private rows: RowsService,
    private comments: CommentsService,
    private history: HistoryService,
    private access: TableAccess,
    private tableExport: TableExport,
    private users: UserService,
    private selection: RowSelection,
    private search: GridSearch
  ) {}

  async index({ inertia, request }: HttpContext) {
    const query = await listQuery(request.qs(), BOOKS_PER_PAGE)
    return inertia.render('tables/index', { books: await this.directory.search(query) })
  }

  /** The table, its book and the reader: the book's owner, on the administrator's behalf. */
  private async tableOf(ctx: HttpContext) {
    const catId = Number(ctx.params.catId)
    const found = await this.directory.table(catId)
    const owner = found ? await this.users.findById(found.book.ownerId) : null
    if (!found || !owner) return ctx.response.abort('Not found', 404)
    const administrator = ctx.auth.use('web').user!
    return {
      catId,
      found,
      reader: consoleActor(owner, administrator),
      editor: consoleActor(administrator, administrator),
    }
  }

  async show(ctx: HttpContext) {
    const { catId, found, reader, editor } = await this.tableOf(ctx)
    const { category } = found
    const query = await gridQuery(ctx.request.qs(), category)
    const columns = category.fields.map(gridColumn)
    return ctx.inertia.render('tables/show', {
      table: {
        id: catId,
        name: category.name,
        book: found.book.code,
        bookId: found.book.id,
        owner: found.book.owner,
      },
      fields: columns,
      views: category.views.map((view) => ({ id: view.id, name: view.name })),
      pageSizes: PAGE_SIZES,
      query,
      edit: await this.editRight(editor, catId),
      live: { channel: GRID_CHANNEL, token: GridFeed.tokenFor(editor.user.id) },
      // Functions: a partial reload (live cells, the row panel) computes only what it asks for.
      rows: () => this.page(reader, found, query),
      panel: () => (query.row ? this.panel(reader, found, query.row) : null),
    })
  }

  /** Whether the administrator may write this table themselves, and if not, why (plain words). */
  private async editRight(editor: Actor, catId: number) {
    try {
      await this.access.forCategory(editor, catId, 'write')
      return { allowed: true, reason: '' }
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      return { allowed: false, reason: refusalInWords(error) }
    }
  }

  /**
   * One page of the grid: the count and the rows of the same selection (RowSelection, as
   * computeTableOperation's count and getTableValues' page read it: filterRowIds compiled by
   * the view filter compiler), then that page's rows shaped by ValuesService.page. The
   * search is narrowed to the rows the indexes name and a sort of a big table reads its
   * column's index (GridSearch: same rows, without a full scan). A page past the last is the
   * last; a filter the compiler refuses is shown with no rows.
   */
  private async page(reader: Actor, found: Found, query: GridQuery) {
    const { category } = found
    const { filterRowIds, none } = selectionOf(query, category)
    const empty = {
      items: [],
      total: 0,
      more: false,
      page: 1,
      perPage: query.perPage,
      search: query.search,
      built: [] as BuiltIndex[],
    }
    if (none) return { ...empty, error: null }
    try {
      const scope = await this.access.forCategory(reader, category.id, 'read')
      const selection = await this.selection.selection(scope, reader, filterRowIds)
      const built: BuiltIndex[] = []
      const sorted = category.fields.find((field) => field.id === query.sort)
      const sortColumn = sorted ? sqlColumnOf(sorted) : null
      if (sorted && sortColumn) {
        const index = await this.search.ensureIndex(category, sorted, sortColumn)
        if (index) built.push(index)
      }
      let scans = false
      if (query.search) {
        // The indexes only narrow: when one fails (an index dropped meanwhile), the scan answers.
        const narrowed = await this.search
          .candidates(category, searchedFields(category), query.search)
          .catch(() => null)
        if (narrowed) {
          selection.where.push(narrowed.where)
          built.push(...narrowed.built)
        } else scans = true
      }
      const counted = scans
        ? await this.search.countUpTo(category, selection, GridSearch.countCap)
        : await this.selection.count(category, selection)
      const more = scans && counted > GridSearch.countCap
      const total = more ? GridSearch.countCap : counted
      const page = Math.min(query.page, Math.max(1, Math.ceil(total / query.perPage)))
      const pageRows = await this.selection.selectRows(category, selection, {
        offset: (page - 1) * query.perPage,
        limit: query.perPage,
      })
      const ids = pageRows.map((row) => Number(row.id))
      const answer = ids.length
        ? await this.values.page(reader, scope, {
            format: 'rows',
            filterRowIds: { row_ids: ids },
            maxRows: ids.length,
          })
        : null
      const values = (answer?.tableValues ?? { rows: [] }) as {
        rows: { id: number; fields: Record<string, { value: unknown; text?: string }> }[]
      }
      const byId = new Map(values.rows.map((row) => [row.id, row]))
      return {
        items: ids
          .map((id) => byId.get(id))
          .filter((row) => row !== undefined)
          .map((row) => ({
            id: row.id,
            number: rowNumber(row.id),
            cells: category.fields.map((field) => cellDisplay(field, row.fields[field.name])),
          })),
        total,
        more,
        page,
        perPage: query.perPage,
        search: query.search,
        built,
        error: null,
      }
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      return { ...empty, error: withoutIds(error.message) }
    }
  }

  /** The row panel: the row's cells, its comments and its last changes. */
  private async panel(reader: Actor, found: Found, rowId: number) {
    const { category } = found
    if (categoryOfRowId(rowId) !== category.id) return { id: rowId, missing: true }
    const subset = await this.values.tableValues(reader, {
      catId: category.id,
      format: 'rows',
      filterRowIds: { row_ids: [rowId] },
      maxRows: 1,
    })
    const row = (
      subset.tableValues as {
        rows: { id: number; fields: Record<string, { value: unknown; text?: string }> }[]
      }
    ).rows[0]
    if (!row) return { id: rowId, missing: true }
    const threads = await this.comments.threadsOfRow(reader, { catId: category.id, rowId })
    const changes = await this.history.rowHistory(reader, {
      rowId: String(rowId),
      nbMax: PANEL_CHANGES,
    })
    const fieldName = (id: number) =>
      category.fields.find((field) => field.id === id)?.name ?? 'a deleted field'
    const nameOf = (code: string) => threads.users[code]?.n ?? code
    return {
      id: rowId,
      number: rowNumber(rowId),
      missing: false,
      cells: category.fields.map((field) => ({
        name: field.name,
        text: cellDisplay(field, row.fields[field.name]),
      })),
      comments: threads.threads
        .filter((thread) => thread.comments.length)
        .map((thread) => ({
          field: fieldName(thread.fieldId),
          comments: thread.comments.map((comment) => ({
            id: comment.id,
            author: nameOf(comment.uc),
            at: comment.c * 1000,
            text: comment.m,
          })),
        })),
      history: {
        total: changes.total,
        changes: changes.changes.map((change) => changeDisplay(change, fieldName(change.fieldId))),
      },
    }
  }

  /**
   * Writes one cell as updateTableValue does (RowsService.updateValue), as the administrator:
   * a refusal (right, lock, a value the field refuses) is a form error and writes nothing.
   */
  async updateCell(ctx: HttpContext) {
    const { catId, found, editor } = await this.tableOf(ctx)
    const input = await validatedBody(ctx, cellEdit)
    if (!input) return ctx.response.redirect().back()
    const field = found.category.fields.find((candidate) => candidate.id === input.fieldId)
    if (!field || categoryOfRowId(Number(input.rowId)) !== catId) {
      ctx.session.flash('errorsBag', { form: 'This cell is not a cell of this table.' })
      return ctx.response.redirect().back()
    }
    const written = await refusalAsFormError(ctx, async () => {
      try {
        return await this.rows.updateValue(editor, {
          rowId: input.rowId,
          fieldId: input.fieldId,
          value: input.value ?? '',
        })
      } catch (error) {
        if (error instanceof RpcError) throw new RpcError(error.code, refusalInWords(error))
        throw error
      }
    })
    if (written)
      ctx.session.flash('notice', `${field.name} of row ${rowNumber(Number(input.rowId))} saved.`)
    return ctx.response.redirect().back()
  }

  /**
   * The grid's rows (its filters, sort, search and view) as CSV, streamed: TableExport reads a
   * page at a time and each is written before the next is read, however many rows there are.
   * `columns` (field ids) chooses the columns, else all of them.
   */
  async exportCsv(ctx: HttpContext) {
    const { catId, found, reader } = await this.tableOf(ctx)
    const query = await gridQuery(ctx.request.qs(), found.category)
    const { filterRowIds, none } = selectionOf(query, found.category)
    const plan = await refusalAsFormError(ctx, () =>
      this.tableExport.open(reader, {
        catId,
        filterRowIds: none ? { row_ids: '0' } : filterRowIds,
        fieldIds: columnsOf(ctx.request.qs().columns, found),
      })
    )
    if (!plan) return ctx.response.redirect().back()
    async function* lines() {
      yield '\uFEFF' + csvLine(plan!.fields.map((field) => field.name))
      for await (const page of plan!.pages) yield page.map(csvLine).join('')
    }
    ctx.response.header('content-type', 'text/csv; charset=utf-8')
    ctx.response.header('content-disposition', csvFileName(plan.categoryName))
    ctx.response.stream(Readable.from(lines()))
  }
}

/** A row's number in its table (1 for its first row): ids are global, the number is not. */
const rowNumber = (rowId: number) => rowId % ROW_ID_SPACE

/** `columns=3,5,8`: the ids of this table's fields, in that order; none or bad, every field. */
function columnsOf(raw: unknown, found: Found): number[] | null {
  // The query string parser reads `3,5,8` as a list already.
  const parts = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : []
  const ids = parts
    .map((part) => Number(part))
    .filter((id) => found.category.fields.some((field) => field.id === id))
  return ids.length ? [...new Set(ids)] : null
}

/** A service refusal as the console says it to an administrator acting as themselves. */
function refusalInWords(error: RpcError): string {
  if (error.code === 'NOT_FOUND' && /^(Table|Book) not found/.test(error.message))
    return 'You are not a member of this book: only its members with the right to write may change its rows.'
  if (error.code === 'FORBIDDEN' && /^Your right in this book/.test(error.message))
    return 'Your right in this book lets you read it only: changing its rows takes the right to write.'
  if (error.code === 'FORBIDDEN' && /is locked/.test(error.message))
    return `${error.message.replace(/only administrators/, "only the book's administrators")}.`
  return withoutIds(error.message)
}

/** Field ids mean nothing on this page: 'field "Amount" (2)' is 'field "Amount"'. */
const withoutIds = (message: string) => message.replace(/("[^"]*") \(\d+\)/g, '$1')
