import { inject } from '@adonisjs/core'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import { SYSTEM_COLUMNS, type FieldDef } from '../lib/field_types.js'
import {
  FilterCompiler,
  normalizeGroup,
  type FilterGroupSpec,
  type FilterSpec,
} from '../lib/filter_compiler.js'
import { assertFilterCount, assertRoomFor, settingJson } from '../lib/limits.js'
import { asIdList, asObject } from '../lib/wire.js'
import { MetaService, type CategoryMeta } from './meta_service.js'
import { dropCounter } from './row_counters.js'
import { SchemaService } from './schema_service.js'
import { bumpMetaVersion, countOf, invalid, unix } from './structure_support.js'
import { TableAccess } from './table_access.js'

/** Filters of a group, those of nested groups included. */
function countFilters(filters: FilterSpec[]): number {
  let count = 0
  for (const filter of filters) count += 1 + countFilters(filter.json.filters ?? [])
  return count
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

/**
 * Views (extensions to the spec, see README.md): createView, updateView, deleteView with their
 * filter groups; the fields a saved view filters or sorts on get indexes.
 */
@inject()
export class ViewStructure {
  constructor(
    private stamps: StampService,
    private meta: MetaService,
    private schema: SchemaService,
    private access: TableAccess
  ) {}

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
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
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
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
    })
    // Its counter counts the old filters: its triggers go now, a new one comes when it pays.
    if (input.filterGroup !== undefined) await dropCounter(category.id, viewId)
    await this.indexFields(category.id, used)
  }

  async deleteView(actor: Actor, viewId: number, b_o?: unknown) {
    const { category } = await this.access.forCategory(actor, await this.view(viewId), 'admin', b_o)
    await this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('table_views').where('id', viewId).delete()
      await bumpMetaVersion(trx, this.meta, category.id, stamp)
    })
    await dropCounter(category.id, viewId)
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
}
