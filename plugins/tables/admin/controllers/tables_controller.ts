import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import { UserService } from '#core/services/user_service'
import { consoleActor } from '#admin/actor'
import { listQuery } from '#admin/list_query'
import { TableDirectory } from '../table_directory.js'
import { ValuesService } from '../../services/values_service.js'

const BOOKS_PER_PAGE = 20
const ROWS_PER_PAGE = 50

/**
 * The tables plugin's console pages (/admin/tables): per book its tables
 * with their fields, views and row counts; one table's rows in a read-only
 * grid paged on the server by ValuesService.tableValues, the method behind
 * getTableValues (as the book's owner, on the administrator's behalf).
 */
@inject()
export default class TablesController {
  constructor(
    private directory: TableDirectory,
    private values: ValuesService,
    private users: UserService
  ) {}

  async index({ inertia, request }: HttpContext) {
    const query = await listQuery(request.qs(), BOOKS_PER_PAGE)
    return inertia.render('tables/index', { books: await this.directory.search(query) })
  }

  async show(ctx: HttpContext) {
    const catId = Number(ctx.params.catId)
    const found = await this.directory.table(catId)
    const owner = found ? await this.users.findById(found.book.ownerId) : null
    if (!found || !owner) return ctx.response.abort('Not found', 404)
    const { book } = found
    const { page } = await listQuery(ctx.request.qs(), ROWS_PER_PAGE)
    const actor = consoleActor(owner, ctx.auth.use('web').user!)
    const answer = await this.values.tableValues(actor, {
      catId,
      b_o: owner.code,
      offset: (page - 1) * ROWS_PER_PAGE,
      maxRows: ROWS_PER_PAGE,
      format: 'rows',
    })
    const counted = await this.directory.rowCounts([catId])
    const values = answer.tableValues as {
      fields: { id: number; name: string; type: string }[]
      rows: { id: number; fields: Record<string, { value: unknown }> }[]
    }
    const columns = found.category.fields.map((field) => ({
      id: field.id,
      name: field.name,
      type: field.type,
    }))
    return ctx.inertia.render('tables/show', {
      table: {
        id: catId,
        name: found.category.name,
        book: book.code,
        bookId: book.id,
        owner: book.owner,
      },
      fields: columns,
      views: found.category.views.map((view) => ({
        id: view.id,
        name: view.name,
        presentation: view.presentation,
      })),
      rows: {
        items: values.rows.map((row) => ({
          id: row.id,
          cells: columns.map((column) => display(row.fields[column.name]?.value)),
        })),
        total: counted.get(catId) ?? 0,
        page,
        perPage: ROWS_PER_PAGE,
        search: '',
      },
    })
  }
}

/** A cell as grid text. */
function display(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'object') return JSON.stringify(value).slice(0, 200)
  return String(value).slice(0, 200)
}
