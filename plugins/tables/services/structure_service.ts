import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import db from '@adonisjs/lucid/services/db'
import { randomBytes } from 'node:crypto'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { validateWire } from '#core/rpc/wire'
import { StampService } from '#core/services/stamp_service'
import { BookAccessService, type BookRef } from '#plugins/books/services/book_access_service'
import '../events.js'
import { assertRoomFor, settingJson } from '../lib/limits.js'
import { triggerUrlHook } from '../lib/trigger_url_hook.js'
import { flagOr } from '../lib/wire.js'
import { fieldValidator } from '../validators/params.js'
import { FieldStructure, type FieldInput } from './field_structure.js'
import { MetaService } from './meta_service.js'
import { PivotService } from './pivot_service.js'
import { SchemaService } from './schema_service.js'
import { bumpMetaVersion, countOf, intParam, invalid, unix } from './structure_support.js'
import { TableAccess } from './table_access.js'

const fixedCode = (prefix: string) => `${prefix}${randomBytes(6).toString('hex')}`

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

/**
 * Tables (extensions to the spec, see README.md): createTable, updateTable, deleteTable and the
 * book's container. Fields, views and tabs have their own services (FieldStructure,
 * ViewStructure, TabStructure). Metadata is written in a stamped transaction; the row table's
 * DDL runs after it (MariaDB commits DDL implicitly), and the metadata is undone when the DDL
 * fails.
 */
@inject()
export class StructureService {
  constructor(
    private stamps: StampService,
    private books: BookAccessService,
    private meta: MetaService,
    private schema: SchemaService,
    private access: TableAccess,
    private fields: FieldStructure,
    private pivots: PivotService
  ) {}

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
      await this.fields.createField(actor, created.categoryId, fieldInput)
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
          changes.rights_select = intParam(rights.select, 'rights.select')
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
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
    })
    // Saved pivot settings get their index (DDL: outside the transaction, see SchemaService).
    if (input.prefs !== undefined) await this.pivots.ensureIndex(category.id)
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
}
