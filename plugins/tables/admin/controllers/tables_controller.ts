import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import { UserService } from '#core/services/user_service'
import { consoleActor } from '#admin/actor'
import { listQuery } from '#admin/list_query'
import { containsPattern, readPage } from '#core/paging'
import { MetaService } from '../../services/meta_service.js'
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
    private meta: MetaService,
    private values: ValuesService,
    private users: UserService
  ) {}

  async index({ inertia, request }: HttpContext) {
    const query = await listQuery(request.qs(), BOOKS_PER_PAGE)
    const books = db
      .from('table_forms as f')
      .join('books as b', 'b.id', 'f.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.del', false)
    const like = containsPattern(query.search)
    if (like) {
      books.where((scope) =>
        scope
          .whereRaw('LOWER(b.code) LIKE ?', [like])
          .orWhereRaw('LOWER(o.code) LIKE ?', [like])
          .orWhereExists((sub) =>
            sub
              .from('table_categories as c')
              .whereRaw('c.form_id = f.id')
              .whereRaw('LOWER(c.name) LIKE ?', [like])
          )
      )
    }
    const forms = await readPage(
      books,
      query,
      (page) =>
        page
          .orderBy('b.id', 'desc')
          .select('f.id as form_id', 'b.id as book_id', 'b.code', 'o.code as owner'),
      (row) => ({
        formId: Number(row.form_id),
        bookId: Number(row.book_id),
        book: row.code as string,
        owner: row.owner as string,
      })
    )
    const items = []
    for (const { formId, ...form } of forms.items) {
      const tables = []
      for (const id of await this.meta.categoryIdsOfForm(formId)) {
        const found = await this.meta.category(id)
        if (!found) continue
        const counted = await db.from(`tt_${id}`).count('* as total').first()
        tables.push({
          id,
          name: found.category.name,
          fields: found.category.fields.length,
          views: found.category.views.map((view) => view.name),
          rows: Number(counted?.total ?? 0),
        })
      }
      items.push({ ...form, tables })
    }
    return inertia.render('tables/index', { books: { ...forms, items } })
  }

  async show(ctx: HttpContext) {
    const catId = Number(ctx.params.catId)
    const found = Number.isSafeInteger(catId) ? await this.meta.category(catId) : null
    if (!found) return ctx.response.abort('Not found', 404)
    const book = await db
      .from('books as b')
      .join('users as o', 'o.id', 'b.owner_id')
      .where('b.id', found.form.bookId)
      .select('b.id', 'b.code', 'b.owner_id', 'o.code as owner')
      .first()
    const owner = book ? await this.users.findById(Number(book.owner_id)) : null
    if (!book || !owner) return ctx.response.abort('Not found', 404)
    const { page } = await listQuery(ctx.request.qs(), ROWS_PER_PAGE)
    const actor = consoleActor(owner, ctx.auth.use('web').user!)
    const answer = await this.values.tableValues(actor, {
      catId,
      b_o: owner.code,
      offset: (page - 1) * ROWS_PER_PAGE,
      maxRows: ROWS_PER_PAGE,
      format: 'rows',
    })
    const counted = await db.from(`tt_${catId}`).count('* as total').first()
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
        bookId: Number(book.id),
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
        total: Number(counted?.total ?? 0),
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
