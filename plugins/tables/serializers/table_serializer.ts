import { JsonText, jsonOf, objectJsonWith } from '#core/rpc/answer_json'
import { formatDateTime, serializeCell, type FieldDef } from '../lib/field_types.js'
import type { Row } from '../lib/row_sql.js'
import type { CategoryMeta, FormMeta, TabMeta, ViewMeta } from '../services/meta_service.js'

/**
 * Wire shapes of smart-table structure (docs/spec/service-interface.md 2.6 and
 * docs/spec/client-facts.md "Smart tables"). Names are spelled out here, one by one: they are a contract.
 */
export function serializeField(field: FieldDef, options: { includeEnums?: boolean } = {}) {
  const out: Record<string, unknown> = {
    id: field.id,
    name: field.name,
    code: field.code,
    fixed_code: field.fixedCode,
    type: field.type,
    order: field.order,
    description: field.description,
    readOnly:
      field.readOnly ||
      [
        'lookup',
        'rollup',
        'formula',
        'autoincrement',
        'created_time',
        'modified_time',
        'created_by',
        'modified_by',
      ].includes(field.type),
    values: field.options.values ?? null,
    dateFormat:
      field.type === 'date' || field.type === 'created_time' || field.type === 'modified_time'
        ? (field.options.dateFormat ?? (field.options.withTime ? 'Y-m-d H:i:s' : 'Y-m-d'))
        : null,
    withTime: field.type === 'date' ? Boolean(field.options.withTime) : undefined,
    numformat:
      field.type === 'double' || field.type === 'rollup' || field.type === 'formula'
        ? (field.options.numformat ?? null)
        : null,
    multiple:
      field.type === 'enum' || field.type === 'link' ? Boolean(field.options.multiple) : undefined,
    lastModified: field.lastModified,
  }
  if (options.includeEnums !== false && field.type === 'enum') {
    out.enumColors = {
      values:
        field.options.enumColors?.values ??
        (field.options.values ?? []).map((value) => ({ value, color: '' })),
      strict: field.options.enumColors?.strict ?? false,
      displayColors: field.options.enumColors?.displayColors ?? false,
    }
  }
  // Only whether it is: the salt and verifier stay on the server.
  if (field.options.encryption) out.encrypted = true
  if (field.type === 'link') out.linkCatId = field.options.linkCatId ?? null
  if (field.type === 'lookup' || field.type === 'rollup') {
    out.linkFieldId = field.options.linkFieldId ?? null
    out.targetFieldId = field.options.targetFieldId ?? null
    if (field.type === 'rollup') out.rollup = field.options.rollup ?? 'count'
  }
  if (field.type === 'formula') {
    out.formula = field.options.formula ?? ''
    out.resultType = field.options.resultType ?? 'number'
  }
  if (field.type === 'smarttext') {
    out.template = field.options.template ?? ''
    out.templateFormat = field.options.templateFormat ?? 'text'
  }
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key]
  return out
}

export function serializeView(view: ViewMeta) {
  return {
    id: view.id,
    name: view.name,
    description: view.description,
    presentation: view.presentation,
    locked: view.locked,
    order: view.order,
    hiddenFields: view.hiddenFields,
    lastModified: view.lastModified,
    filterGroup: view.filterGroup
      ? {
          id: view.filterGroup.id,
          operator: view.filterGroup.operator,
          lastModified: view.filterGroup.lastModified,
          filters: view.filterGroup.filters.map((filter) => ({
            id: filter.id,
            field_id: filter.field_id,
            filter_type: filter.filter_type,
            json: filter.json,
            lastModified: filter.lastModified ?? view.filterGroup!.lastModified,
          })),
        }
      : null,
    card: {
      hz_field_id: view.card.hz_field_id ?? null,
      layout: view.card.layout ?? null,
      title_field_id: view.card.title_field_id ?? null,
    },
    calendar: {
      display_field_id: view.calendar.display_field_id ?? null,
      start_field_id: view.calendar.start_field_id ?? null,
      end_field_id: view.calendar.end_field_id ?? null,
      co_field_id: view.calendar.co_field_id ?? null,
    },
  }
}

const PIVOT_KEYS = [
  'pivot_id',
  'p_catid',
  'pivot_catid',
  'p_field_hz',
  'p_field_vt',
  'p_field_va',
  'p_field_co',
] as const

function pivotSettings(prefs: Record<string, unknown>) {
  return Object.fromEntries(PIVOT_KEYS.map((key) => [key, prefs[key] ?? null])) as Record<
    (typeof PIVOT_KEYS)[number],
    unknown
  >
}

export function serializeCategory(
  category: CategoryMeta,
  options: {
    includeFields?: boolean
    includeEnums?: boolean
    selectedViewId?: number | null
    viewRowIds?: Map<number, number[]>
  } = {}
) {
  return {
    id: category.id,
    name: category.name,
    description: category.description,
    code: category.code,
    fixed_code: category.fixedCode,
    order: category.order,
    fpAutoExport: false,
    mobLargeColNb: 3,
    mobSmallColNb: 2,
    // Pivot settings (spec 2.6) are saved in the table's prefs (updateTable); getTablePivotValues reads them.
    ...pivotSettings(category.prefs),
    locked: category.locked ? 1 : 0,
    sysFunc: category.sysFunc,
    triggerUpdateUrl: category.triggerUpdateUrl,
    rights: { modify: category.rightsModify, select: category.rightsSelect },
    lastModified: formatDateTime(new Date(category.lastModified * 1000)),
    prefs: { link_presentation: 'text', ...category.prefs },
    views: category.views.map((view) => {
      const out: Record<string, unknown> = serializeView(view)
      if (options.viewRowIds) out.rowIds = options.viewRowIds.get(view.id) ?? []
      return out
    }),
    selectedViewId: options.selectedViewId ?? category.views[0]?.id ?? null,
    fields: options.includeFields
      ? category.fields.map((field) => serializeField(field, options))
      : null,
  }
}

export function serializeTab(tab: TabMeta) {
  return {
    id: tab.id,
    category_id: tab.categoryId,
    view_id: tab.viewId,
    order: tab.order,
    hidden: tab.hidden,
    lastModified: tab.lastModified,
  }
}

export function serializeForm(
  form: FormMeta,
  extra: { creator: string; right: number | null; lastTabId: number | null }
) {
  return {
    id: form.id,
    name: form.name,
    description: form.description,
    creator: extra.creator,
    platform: false,
    system: form.isSystem,
    public: form.isPublic,
    lastModified: form.lastModified,
    rights: { modify: form.rightsModify, select: form.rightsSelect },
    right: extra.right ?? 0,
    lastTabId: extra.lastTabId ?? 0,
  }
}

/** The largest array index (2^32 - 2): JSON.stringify writes properties named by one apart. */
const MAX_ARRAY_INDEX = 4_294_967_294

/**
 * A page's `fields` in getTableValues' columns format: each field as serializeField makes it,
 * its `values` the page's cells, {id, value[, text]} a row. Written as JSON text (answerJson
 * sends it as it is): the 1,200 cell objects of a 100-row page, made for JSON.stringify to walk,
 * cost the server a sixth of the page's time.
 */
export function serializePageColumns(fields: FieldDef[], rows: Row[]): JsonText {
  const idTexts = rows.map((row) => `{"id":${jsonOf(Number(row.id))}`)
  const fieldTexts = fields.map((field) => {
    let cells = ''
    for (const [index, row] of rows.entries()) {
      const cell = serializeCell(field, row)
      let text = idTexts[index]
      const value = jsonOf(cell.value)
      if (value !== undefined) text += `,"value":${value}`
      if ('text' in cell) {
        const shown = jsonOf(cell.text)
        if (shown !== undefined) text += `,"text":${shown}`
      }
      cells += `${index ? ',' : ''}${text}}`
    }
    return objectJsonWith(serializeField(field), { values: `[${cells}]` })
  })
  return new JsonText(`[${fieldTexts.join(',')}]`)
}

/**
 * rowInfos: {rowId: {order, index}}, or [] when empty (as the reference server's PHP answers).
 * As JSON text: an object of 100 properties named by row ids is built by V8 a hidden class a
 * key, which cost a page about as much as its cells. Row ids (table id × 2^32 + n) are never
 * array indexes, which JSON.stringify would put first; should one be, the object is made.
 */
export function serializeRowInfos(rows: Row[], offset: number) {
  if (rows.length === 0) return []
  if (rows.some((row) => !(Number(row.id) > MAX_ARRAY_INDEX))) {
    const infos: Record<string, { order: number; index: number }> = {}
    rows.forEach(
      (row, index) => (infos[String(row.id)] = { order: Number(row.ord), index: offset + index })
    )
    return infos
  }
  let text = ''
  for (const [index, row] of rows.entries()) {
    text += `${index ? ',' : '{'}${jsonOf(String(row.id))}:{"order":${jsonOf(Number(row.ord))},"index":${jsonOf(offset + index)}}`
  }
  return new JsonText(`${text}}`)
}
