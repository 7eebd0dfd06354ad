import { inject } from '@adonisjs/core'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { assertRoomFor } from '../lib/limits.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { countOf, intParam, invalid, unix } from './structure_support.js'
import { TableAccess } from './table_access.js'

/** createTab and updateTab's parameters (`view_id` or `viewId`; empty or 0 detaches the view). */
export interface TabInput {
  b_o?: string
  view_id?: unknown
  viewId?: unknown
  order?: number
  hidden?: boolean
}

/** Tabs (extensions to the spec, see README.md): createTab, updateTab, deleteTab. */
@inject()
export class TabStructure {
  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private access: TableAccess
  ) {}

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
    const id = intParam(raw, 'view_id')
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
