import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { UserService } from '#core/services/user_service'
import { BookAccessService, RIGHT_ADMIN } from '#plugins/books/services/book_access_service'
import { FilterCompiler } from '../lib/filter_compiler.js'
import { serializeCategory, serializeForm, serializeTab } from '../serializers/table_serializer.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { RowSelection, type Selection } from './row_selection.js'
import { TableAccess } from './table_access.js'

/**
 * getBookTables: a book's smart-table container with its tabs and tables, each table's
 * structure serialized once (getTableRows' getTableInfo answers the same).
 */
@inject()
export class BookTablesService {
  constructor(
    private stamps: StampService,
    private users: UserService,
    private books: BookAccessService,
    private meta: MetaService,
    private access: TableAccess,
    private rowSelection: RowSelection
  ) {}

  /** getBookTables: the book's container, watermark first (the kernel's sync rule). */
  async bookTablesOf(
    actor: Actor | null,
    input: {
      b_o: string
      b_c: string
      format?: string
      includeFields?: boolean
      includeEnums?: boolean
      getRowIds?: boolean
      externViews?: boolean
    }
  ) {
    const book = await this.books.resolve(input.b_o, input.b_c)
    if (!book) throw rpcError('NOT_FOUND', 'Book not found')
    const sstamp = await this.stamps.watermark()
    const bookTables = await this.bookTables(actor, book, {
      includeFields: input.includeFields ?? false,
      includeEnums: input.includeEnums ?? true,
      android: input.format === 'android',
      getRowIds: input.getRowIds ?? false,
      externViews: input.externViews ?? false,
    })
    return { sstamp, bookTables }
  }

  /** getBookTables: the container with its tabs and categories (same order: tabs[i] pairs with categories[i]). */
  async bookTables(
    actor: Actor | null,
    book: { id: number },
    options: {
      includeFields: boolean
      includeEnums: boolean
      android: boolean
      getRowIds: boolean
      externViews: boolean
    }
  ) {
    const form = await this.meta.formOfBook(book.id)
    const bookRef = await this.access.book(book.id)
    if (!form) {
      if (!actor)
        throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey (this table is not public)')
      await this.books.assert(actor, bookRef, 'read')
      return null
    }
    const right = await this.access.rightIn(actor, bookRef, 'read', form.isPublic)
    const state = actor
      ? await this.meta.userState(actor.user.id, form.id)
      : { lastTabId: null, selectedViews: {} as Record<string, number> }
    const tabs = await this.meta.tabs(form.id)
    const categories = new Map<number, CategoryMeta>()
    for (const id of await this.meta.categoryIdsOfForm(form.id)) {
      const found = await this.meta.category(id)
      if (!found) continue
      if (
        right !== null &&
        right < found.category.rightsSelect &&
        right < RIGHT_ADMIN &&
        !form.isPublic
      )
        continue
      categories.set(id, found.category)
    }
    // One tab per category at least, so tabs[i] and categories[i] always pair up.
    const pairs: { tab: ReturnType<typeof serializeTab>; category: CategoryMeta }[] = []
    for (const tab of tabs) {
      const category = categories.get(tab.categoryId)
      if (category) pairs.push({ tab: serializeTab(tab), category })
    }
    for (const category of categories.values()) {
      if (!pairs.some((pair) => pair.category.id === category.id)) {
        pairs.push({
          tab: {
            id: 0,
            category_id: category.id,
            view_id: category.views[0]?.id ?? null,
            order: 0,
            hidden: false,
            lastModified: category.lastModified,
          },
          category,
        })
      }
    }
    const serialized = new Map<number, Promise<ReturnType<typeof serializeCategory>>>()
    const serializedOnce = (category: CategoryMeta) => {
      let done = serialized.get(category.id)
      if (!done) {
        done = (async () =>
          serializeCategory(category, {
            includeFields: options.includeFields,
            includeEnums: options.includeEnums,
            selectedViewId: state.selectedViews[String(category.id)] ?? null,
            viewRowIds:
              options.android && options.includeFields && options.getRowIds
                ? await this.viewRowIds(category, actor)
                : undefined,
          }))()
        serialized.set(category.id, done)
      }
      return done
    }
    const creators = form.creatorId ? await this.users.codesOf([form.creatorId]) : null
    const creator = form.creatorId ? creators?.get(form.creatorId) : undefined
    const out: Record<string, unknown> = {
      ...serializeForm(form, {
        creator: creator ?? bookRef.b_o,
        right,
        lastTabId: state.lastTabId,
      }),
      tabs: pairs.map((pair) => pair.tab),
      // Each table is serialized once, however many tabs show it (at most tabsPerTable).
      categories: await Promise.all(pairs.map(({ category }) => serializedOnce(category))),
    }
    if (options.externViews) out.externViews = []
    return out
  }

  private async viewRowIds(category: CategoryMeta, actor: Actor | null) {
    const map = new Map<number, number[]>()
    for (const view of category.views) {
      const compiled = new FilterCompiler(category.fields, {
        userCode: actor?.user.code ?? null,
      }).compile(view.filterGroup)
      const selection: Selection = {
        where: compiled.where ? [compiled.where] : [],
        orderBy: compiled.orderBy,
        onlyIds: null,
      }
      map.set(view.id, await this.rowSelection.idsOf(category, selection))
    }
    return map
  }
}
