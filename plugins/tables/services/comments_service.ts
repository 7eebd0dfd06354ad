import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { isUniqueViolation } from '#core/services/db_errors'
import { readQuery } from '#core/native_sql'
import { OutboxService } from '#core/outbox/outbox_service'
import { RIGHT_ADMIN } from '#plugins/books/services/book_access_service'
import { commentCellKey, rowTableName, type FieldDef } from '../lib/field_types.js'
import type { CategoryMeta } from './meta_service.js'
import { TableAccess, type TableScope } from './table_access.js'
import { usersByCode, type UsersByCode } from './user_names.js'
import { rowIdOf } from '../lib/wire.js'
import type { RowsChanged } from '../events.js'

type Row = Record<string, any>

/** A comment as the wire shows it (docs/spec/service-interface.md 2.8). */
export interface WireComment {
  id: number
  m: string
  mid: number | null
  action: unknown[]
  uc: string
  c: number
  s: number
  ur?: boolean
}

export interface CommentSummary {
  sstamp: number
  total: number
  totalUnread: number
  notifSubscribe: null
  from: string | null
}

/** `users` of an answer: the authors of the comments shown, by user code. */
export type CommentUsers = UsersByCode

/** A cell as the comment operations name it. */
interface CellRef {
  fieldId: number
  rowId: string
  b_o?: string
}

const MAX_TEXT = 65_000
const unix = () => Math.floor(Date.now() / 1000)
const marks = (count: number) => Array.from({ length: count }, () => '?').join(', ')

function toWire(row: Row, withUnread: boolean, viewerId: number | null, lastRead: number) {
  let action: unknown[] = []
  try {
    const parsed = row.action ? JSON.parse(row.action) : []
    action = Array.isArray(parsed) ? parsed : []
  } catch {
    action = []
  }
  const comment: WireComment = {
    id: Number(row.id),
    m: row.text,
    mid: row.mid === null || row.mid === undefined ? null : Number(row.mid),
    action,
    uc: row.user_code,
    c: Number(row.created_at),
    s: Number(row.sstamp),
  }
  if (withUnread)
    comment.ur = viewerId !== null && Number(row.user_id) !== viewerId && comment.id > lastRead
  return comment
}

/**
 * Comment threads on cells of `comments` fields. A comment cell answers null
 * when it has no comment, else `{summary}` (docs/spec/service-interface.md 2.8), plus `comments` (the
 * last `maxComments`, oldest first, each with `ur`) when the read asked for
 * them. Unread: comments of other users after the reader's read position in
 * the cell, which getTableValueComments moves to the last comment.
 */
@inject()
export class CommentsService {
  constructor(
    private stamps: StampService,
    private access: TableAccess,
    private outbox: OutboxService
  ) {}

  /** getTableValueComments: the thread of a cell (the field names the table). */
  async threadOfCell(actor: Actor | null, input: CellRef) {
    const scope = await this.scopeOf(actor, input, 'read')
    return this.thread(actor, scope, input.fieldId, rowIdOf(input.rowId))
  }

  /**
   * The comments of every comment cell of a row (the console's row panel), oldest first per
   * field, with their authors. A look, not a read: nobody's read position moves.
   */
  async threadsOfRow(actor: Actor, input: { catId: number; rowId: number; b_o?: string }) {
    const scope = await this.access.forCategory(actor, input.catId, 'read', input.b_o)
    const fields = this.commentFields(scope.category.fields)
    if (fields.length === 0) return { threads: [], users: {} as CommentUsers }
    const rows = await readQuery(
      `SELECT * FROM table_comments WHERE category_id = ? AND row_id = ? AND field_id IN (${marks(fields.length)}) ORDER BY id`,
      [scope.category.id, input.rowId, ...fields.map((field) => field.id)]
    )
    const threads = fields.map((field) => ({
      fieldId: field.id,
      comments: rows
        .filter((row) => Number(row.field_id) === field.id)
        .map((row) => toWire(row, false, null, 0)),
    }))
    return { threads, users: await this.users(rows.map((row) => row.user_code)) }
  }

  /** editTableValueComments: adds comment `m` to a cell, or changes comment `id`. */
  async editInCell(actor: Actor, input: CellRef & { m: string; id?: number; action?: unknown }) {
    const scope = await this.scopeOf(actor, input, 'write')
    return this.edit(actor, scope, {
      fieldId: input.fieldId,
      rowId: rowIdOf(input.rowId),
      text: input.m,
      action: input.action,
      commentId: input.id,
    })
  }

  /** deleteTableValueComments: deletes comments `ids` of a cell. */
  async removeFromCell(actor: Actor, input: CellRef & { ids: number[] }) {
    const scope = await this.scopeOf(actor, input, 'write')
    return this.remove(actor, scope, {
      fieldId: input.fieldId,
      rowId: rowIdOf(input.rowId),
      ids: input.ids,
    })
  }

  private async scopeOf(actor: Actor | null, input: CellRef, need: 'read' | 'write') {
    const categoryId = await this.access.inferCategory({ fieldId: input.fieldId })
    return this.access.forCategory(actor, categoryId, need, input.b_o)
  }

  /** The comment fields among `fields`. */
  commentFields(fields: FieldDef[]) {
    return fields.filter((field) => field.type === 'comments')
  }

  /**
   * Fills the comment cells of a page (rows as read from the row table): two
   * statements for the whole page, none when no comment field is shown.
   * Returns the `users` of the comments shown (authors of the last comments).
   */
  async attach(
    category: CategoryMeta,
    fields: FieldDef[],
    rows: Row[],
    viewerId: number | null,
    maxComments: number | undefined
  ): Promise<CommentUsers> {
    const commentFields = this.commentFields(fields)
    if (commentFields.length === 0 || rows.length === 0) return {}
    const rowIds = rows.map((row) => Number(row.id))
    const fieldIds = commentFields.map((field) => field.id)
    const cells = await this.cells(category.id, fieldIds, rowIds, viewerId, maxComments ?? 1)
    const shown: Row[] = []
    for (const row of rows) {
      for (const field of commentFields) {
        const cell = cells.get(`${Number(row.id)}:${field.id}`)
        if (!cell) continue
        row[commentCellKey(field.id)] = maxComments
          ? { summary: cell.summary, comments: cell.comments }
          : { summary: cell.summary }
        if (maxComments) shown.push(...cell.comments)
      }
    }
    return maxComments ? this.users(shown.map((comment) => comment.uc)) : {}
  }

  /** Summary and last `last` comments of each cell that has comments. */
  private async cells(
    categoryId: number,
    fieldIds: number[],
    rowIds: number[],
    viewerId: number | null,
    last: number
  ) {
    const bindings = [categoryId, ...rowIds, ...fieldIds]
    const where = `c.category_id = ? AND c.row_id IN (${marks(rowIds.length)}) AND c.field_id IN (${marks(fieldIds.length)})`
    const summaries = await readQuery(
      `SELECT c.row_id, c.field_id, COUNT(*) AS total, MAX(c.sstamp) AS sstamp,
         SUM(CASE WHEN c.user_id <> ? AND c.id > COALESCE(r.last_read_id, 0) THEN 1 ELSE 0 END) AS unread,
         MAX(COALESCE(r.last_read_id, 0)) AS last_read
       FROM table_comments c
       LEFT JOIN table_comment_reads r ON r.user_id = ? AND r.field_id = c.field_id AND r.row_id = c.row_id
       WHERE ${where} GROUP BY c.row_id, c.field_id`,
      [viewerId ?? 0, viewerId ?? 0, ...bindings]
    )
    const lastRows = await readQuery(
      `SELECT * FROM (SELECT c.*, ROW_NUMBER() OVER (PARTITION BY c.row_id, c.field_id ORDER BY c.id DESC) AS quire_rn
         FROM table_comments c WHERE ${where}) x WHERE x.quire_rn <= ? ORDER BY x.id`,
      [...bindings, last]
    )
    const out = new Map<
      string,
      { summary: CommentSummary; comments: WireComment[]; lastRead: number }
    >()
    for (const row of summaries) {
      out.set(`${Number(row.row_id)}:${Number(row.field_id)}`, {
        lastRead: Number(row.last_read ?? 0),
        summary: {
          sstamp: Number(row.sstamp),
          total: Number(row.total),
          totalUnread: viewerId === null ? 0 : Number(row.unread ?? 0),
          notifSubscribe: null,
          from: null,
        },
        comments: [],
      })
    }
    for (const row of lastRows) {
      const key = `${Number(row.row_id)}:${Number(row.field_id)}`
      const cell = out.get(key)
      if (!cell) continue
      const comment = toWire(row, true, viewerId, cell.lastRead)
      cell.comments.push(comment)
      cell.summary.from = comment.uc // ordered oldest first: the last one wins
    }
    return out
  }

  /** `users` for a set of author codes: display name and the user's stamp. */
  async users(codes: string[]): Promise<CommentUsers> {
    return usersByCode(codes)
  }

  /** The comment field `fieldId` of the scope's table and an existing row `rowId`. */
  async cell(scope: TableScope, fieldId: number, rowId: number) {
    const field = scope.category.fields.find((candidate) => candidate.id === fieldId)
    if (!field) throw rpcError('NOT_FOUND', `Field ${fieldId} not found`)
    if (field.type !== 'comments')
      throw rpcError('INVALID_PARAMETER', `Field ${fieldId} is not a comments field`, {
        field: 'fieldId',
      })
    const rows = await readQuery(`SELECT id FROM ${rowTableName(scope.category.id)} WHERE id = ?`, [
      rowId,
    ])
    if (!rows.length) throw rpcError('NOT_FOUND', `Row ${rowId} not found`)
    return field
  }

  /**
   * getTableValueComments: the whole thread of a cell (oldest first), its
   * summary as it was before this read, and the authors; the reader's read
   * position moves to the last comment.
   */
  private async thread(actor: Actor | null, scope: TableScope, fieldId: number, rowId: number) {
    await this.cell(scope, fieldId, rowId)
    const viewerId = actor?.user.id ?? null
    const cells = await this.cells(scope.category.id, [fieldId], [rowId], viewerId, 1)
    const cell = cells.get(`${rowId}:${fieldId}`)
    const rows = await readQuery(
      'SELECT * FROM table_comments WHERE category_id = ? AND row_id = ? AND field_id = ? ORDER BY id',
      [scope.category.id, rowId, fieldId]
    )
    const comments = rows.map((row) => toWire(row, false, viewerId, 0))
    const summary: CommentSummary = cell?.summary ?? {
      sstamp: 0,
      total: 0,
      totalUnread: 0,
      notifSubscribe: null,
      from: null,
    }
    if (viewerId !== null && comments.length)
      await this.markRead(viewerId, fieldId, rowId, comments[comments.length - 1].id)
    return {
      fieldId,
      rowId,
      data: {
        status: 'ok',
        formLastModified: scope.form.lastModified,
        users: await this.users(comments.map((comment) => comment.uc)),
        summary,
        comments,
      },
    }
  }

  private async markRead(userId: number, fieldId: number, rowId: number, lastId: number) {
    const key = { user_id: userId, field_id: fieldId, row_id: rowId }
    const update = () =>
      db
        .from('table_comment_reads')
        .where(key)
        .where('last_read_id', '<', lastId)
        .update({ last_read_id: lastId })
    await update()
    const exists = await db.from('table_comment_reads').where(key).first()
    if (exists) return
    try {
      await db.table('table_comment_reads').insert({ ...key, last_read_id: lastId })
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
      await update() // a concurrent read inserted it first
    }
  }

  /**
   * editTableValueComments (extension): adds a comment to a cell, or changes
   * the text (and action) of comment `commentId`, which only its author may.
   * Stamped; members are told through `tables:rows_changed`; a new comment is staged for the
   * outbox (`tables:comment_created`, webhooks' comment.created) in the same transaction.
   */
  private async edit(
    actor: Actor,
    scope: TableScope,
    input: { fieldId: number; rowId: number; text: string; action?: unknown; commentId?: number }
  ) {
    await this.cell(scope, input.fieldId, input.rowId)
    const text = input.text.trim()
    if (text === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: m')
    if (text.length > MAX_TEXT)
      throw rpcError('INVALID_PARAMETER', `Invalid parameter m: more than ${MAX_TEXT} characters`, {
        field: 'm',
      })
    const action =
      input.action === undefined || input.action === null || input.action === ''
        ? null
        : JSON.stringify(this.actionList(input.action))
    const id = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      let commentId: number
      if (input.commentId !== undefined) {
        const existing = await trx
          .from('table_comments')
          .where('id', input.commentId)
          .where('category_id', scope.category.id)
          .where('field_id', input.fieldId)
          .where('row_id', input.rowId)
          .first()
        if (!existing) throw rpcError('NOT_FOUND', `Comment ${input.commentId} not found`)
        if (Number(existing.user_id) !== actor.user.id)
          throw rpcError('FORBIDDEN', 'Only the author of a comment may change it')
        await trx
          .from('table_comments')
          .where('id', input.commentId)
          .update({
            text,
            ...(action === null ? {} : { action }),
            sstamp: stamp,
            updated_at: unix(),
          })
        commentId = input.commentId
      } else {
        const [inserted] = await trx.table('table_comments').insert({
          category_id: scope.category.id,
          field_id: input.fieldId,
          row_id: input.rowId,
          user_id: actor.user.id,
          user_code: actor.user.code,
          text,
          action,
          mid: null,
          sstamp: stamp,
          created_at: unix(),
          updated_at: unix(),
        })
        commentId = Number(inserted)
        // comment.created (webhooks), in this transaction, when a subscription wants the table.
        if (this.outbox.wants('tables:comment_created', { categoryId: scope.category.id }))
          await this.outbox.stage(
            trx,
            'tables:comment_created',
            {
              bookId: scope.book.id,
              b_o: scope.book.b_o,
              b_c: scope.book.b_c,
              categoryId: scope.category.id,
              catName: scope.category.name,
              fieldId: input.fieldId,
              fieldName: scope.category.fields.find((f) => f.id === input.fieldId)?.name ?? '',
              rowId: input.rowId,
              commentId,
              text,
              action: action === null ? null : JSON.parse(action),
              actorId: actor.user.id,
              onBehalfOf: actor.onBehalf ? actor.principal.id : null,
              stamp,
            },
            afterCommit
          )
      }
      afterCommit(() => this.announce(actor, scope, input.fieldId, input.rowId, stamp))
      return commentId
    })
    return { id, ...(await this.thread(actor, scope, input.fieldId, input.rowId)) }
  }

  /** deleteTableValueComments (extension): the author, or a book administrator. */
  private async remove(
    actor: Actor,
    scope: TableScope,
    input: { fieldId: number; rowId: number; ids: number[] }
  ) {
    await this.cell(scope, input.fieldId, input.rowId)
    const deleted = await this.stamps.write(async ({ trx, stamp, afterCommit }) => {
      const rows = await trx
        .from('table_comments')
        .whereIn('id', input.ids)
        .where('category_id', scope.category.id)
        .where('field_id', input.fieldId)
        .where('row_id', input.rowId)
        .select('id', 'user_id')
      if (rows.length !== new Set(input.ids).size)
        throw rpcError('NOT_FOUND', 'Comment not found in this cell')
      const admin = (scope.right ?? 0) >= RIGHT_ADMIN
      if (!admin && rows.some((row) => Number(row.user_id) !== actor.user.id))
        throw rpcError(
          'FORBIDDEN',
          'Only the author of a comment or an administrator may delete it'
        )
      await trx.from('table_comments').whereIn('id', input.ids).delete()
      afterCommit(() => this.announce(actor, scope, input.fieldId, input.rowId, stamp))
      return rows.length
    })
    return { fieldId: input.fieldId, rowId: input.rowId, deleted }
  }

  /** Comments of deleted rows (in the row delete's transaction). */
  async deleteForRows(trx: any, categoryId: number, rowIds: number[]) {
    await trx
      .from('table_comments')
      .where('category_id', categoryId)
      .whereIn('row_id', rowIds)
      .delete()
    await trx.from('table_comment_reads').whereIn('row_id', rowIds).delete()
  }

  private actionList(raw: unknown): unknown[] {
    let value = raw
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw)
      } catch {
        throw rpcError('INVALID_PARAMETER', 'Invalid parameter action: a JSON array', {
          field: 'action',
        })
      }
    }
    if (!Array.isArray(value))
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter action: a JSON array', {
        field: 'action',
      })
    return value
  }

  private announce(actor: Actor, scope: TableScope, fieldId: number, rowId: number, stamp: number) {
    const event: RowsChanged = {
      bookId: scope.book.id,
      b_o: scope.book.b_o,
      b_c: scope.book.b_c,
      categoryId: scope.category.id,
      created: [],
      modified: [rowId],
      deleted: [],
      fieldIds: [fieldId],
      actorId: actor.user.id,
      onBehalfOf: actor.onBehalf ? actor.principal.id : null,
      stamp,
      bypassUrlTrigger: true,
      source: 'api',
    }
    return emitter.emit('tables:rows_changed', event)
  }
}
