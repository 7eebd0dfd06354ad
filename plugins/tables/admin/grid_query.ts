import vine from '@vinejs/vine'
import { COMPUTED_TYPES, kindOf, type FieldDef } from '../lib/field_types.js'
import { PREDICATES } from '../lib/filter_compiler.js'
import type { FilterGroupSpec, FilterSpec } from '../lib/filter_compiler.js'
import type { CategoryMeta } from '../services/meta_service.js'

/** Page sizes the grid offers; anything else is the default. */
export const PAGE_SIZES = [25, 50, 100, 200] as const
export const DEFAULT_PAGE_SIZE = 50
/** Filters one grid applies at most (a view allows 100; a URL should stay readable). */
const MAX_FILTERS = 20

/** Predicates the console offers, in plain words ("is me" would mean the book's owner here: left out). */
export const PREDICATE_WORDS: Record<string, string> = {
  is: 'is',
  is_not: 'is not',
  contains: 'contains',
  does_not_contain: 'does not contain',
  begins_with: 'begins with',
  ends_with: 'ends with',
  is_empty: 'is empty',
  is_not_empty: 'is not empty',
  any_of: 'is any of',
  none_of: 'is none of',
  all_of: 'has all of',
  lt: 'is less than',
  lte: 'is at most',
  gt: 'is more than',
  gte: 'is at least',
  between: 'is between',
  on: 'is on',
  before: 'is before',
  after: 'is after',
  on_or_before: 'is on or before',
  on_or_after: 'is on or after',
  within: 'is within',
  checked: 'is checked',
  unchecked: 'is not checked',
}

/** Predicates that take no value. */
export const NO_OPERAND = new Set(['is_empty', 'is_not_empty', 'checked', 'unchecked'])

/** Field types in plain words. */
const TYPE_WORDS: Record<string, string> = {
  shorttext: 'Text',
  mediumtext: 'Long text',
  double: 'Number',
  integer: 'Whole number',
  date: 'Date',
  checkbox: 'Checkbox',
  enum: 'Choice',
  link: 'Link to another table',
  lookup: 'Looked up',
  rollup: 'Summary of links',
  formula: 'Formula',
  files: 'Files',
  user: 'Person',
  email: 'E-mail',
  phone: 'Phone',
  url: 'Web address',
  autoincrement: 'Number given automatically',
  created_time: 'Created at',
  modified_time: 'Changed at',
  created_by: 'Created by',
  modified_by: 'Changed by',
  comments: 'Comments',
  activity: 'Activity',
  smarttext: 'Smart text',
}

/** Kinds whose cells a text search looks into (`contains`). */
const SEARCHED_KINDS = new Set(['text', 'enum', 'multi', 'link', 'user'])

/** How the grid edits a field's cells, or null when people do not write them here. */
export type Editor = 'text' | 'longtext' | 'number' | 'date' | 'checkbox' | 'choice' | null

const isEncrypted = (field: FieldDef) => Boolean(field.options.encryption)

function editorOf(field: FieldDef): Editor {
  if (COMPUTED_TYPES.has(field.type) || field.readOnly || isEncrypted(field)) return null
  switch (field.type) {
    case 'shorttext':
    case 'email':
    case 'phone':
    case 'url':
    case 'user':
      return 'text'
    case 'mediumtext':
      return 'longtext'
    case 'double':
    case 'integer':
      return 'number'
    case 'date':
      return 'date'
    case 'checkbox':
      return 'checkbox'
    case 'enum':
      return field.options.multiple ? 'text' : 'choice'
    default:
      return null // links, files, smart text: the apps edit them
  }
}

/** A column as the grid page shows it. */
export function gridColumn(field: FieldDef) {
  const kind = kindOf(field)
  const filterable = !isEncrypted(field) && kind !== 'none'
  return {
    id: field.id,
    name: field.name,
    type: TYPE_WORDS[field.type] ?? field.type,
    editor: editorOf(field),
    choices: field.type === 'enum' ? (field.options.values ?? []) : [],
    sortable: filterable && kind !== 'files',
    predicates: filterable
      ? PREDICATES[kind]
          .filter((predicate) => PREDICATE_WORDS[predicate])
          .map((predicate) => ({
            value: predicate,
            label: PREDICATE_WORDS[predicate],
            operand: !NO_OPERAND.has(predicate),
          }))
      : [],
  }
}

export interface GridFilter {
  field: number
  predicate: string
  operand: string
}

/** What the grid shows, from its URL; every value checked on its own, a bad one is its default. */
export interface GridQuery {
  page: number
  perPage: number
  sort: number | null
  dir: 'asc' | 'desc'
  search: string
  view: number | null
  match: 'all' | 'any'
  filters: GridFilter[]
  row: number | null
}

const scalar = (value: unknown) => (Array.isArray(value) ? value[0] : value)
const positive = (value: unknown) => {
  const number = Number(scalar(value))
  return Number.isSafeInteger(number) && number > 0 ? number : null
}

const filterRule = vine.compile(
  vine
    .array(
      vine.object({
        field: vine.number().withoutDecimals().positive(),
        predicate: vine.string().trim().maxLength(40),
        operand: vine.string().maxLength(500).optional(),
      })
    )
    .maxLength(MAX_FILTERS)
)

/** `filters` is a JSON list of {field, predicate, operand}; a malformed one is no filter. */
async function filtersOf(raw: unknown, category: CategoryMeta): Promise<GridFilter[]> {
  const text = scalar(raw)
  if (typeof text !== 'string' || text.trim() === '' || text.length > 20_000) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return []
  }
  const list = await filterRule.validate(parsed).catch(() => null)
  if (!list) return []
  return list
    .filter((filter) => category.fields.some((field) => field.id === filter.field))
    .map((filter) => ({
      field: filter.field,
      predicate: filter.predicate,
      operand: filter.operand ?? '',
    }))
}

/** The grid's state from its query string (the table's fields check the field ids). */
export async function gridQuery(
  qs: Record<string, unknown>,
  category: CategoryMeta
): Promise<GridQuery> {
  const perPage = positive(qs.perPage)
  const sort = positive(qs.sort)
  const view = positive(qs.view)
  const search = scalar(qs.search)
  return {
    page: Math.min(positive(qs.page) ?? 1, 10_000_000),
    perPage: PAGE_SIZES.includes(perPage as any) ? perPage! : DEFAULT_PAGE_SIZE,
    sort: sort && category.fields.some((field) => field.id === sort) ? sort : null,
    dir: scalar(qs.dir) === 'desc' ? 'desc' : 'asc',
    search: typeof search === 'string' ? search.trim().slice(0, 100) : '',
    view: view && category.views.some((candidate) => candidate.id === view) ? view : null,
    match: scalar(qs.match) === 'any' ? 'any' : 'all',
    filters: await filtersOf(qs.filters, category),
    row: positive(qs.row),
  }
}

/**
 * The grid state as getTableValues' filterRowIds: its filter group in applyViewFilters, read by
 * the view filter compiler through RowSelection like any read's. The group holds the column
 * sort first, the chosen view's filters and sorts, the grid's filters (all or any), and the
 * search as `contains` on every searchable column. `none`: a search in a table without a
 * searchable column, which nothing can match.
 */
export function selectionOf(
  query: GridQuery,
  category: CategoryMeta
): {
  filterRowIds: { applyViewFilters: { filterGroup: FilterGroupSpec } } | undefined
  none: boolean
} {
  const filters: FilterSpec[] = []
  if (query.sort)
    filters.push({ field_id: query.sort, filter_type: 'sort', json: { predicate: query.dir } })
  const view = category.views.find((candidate) => candidate.id === query.view)
  if (view?.filterGroup) filters.push(nested(view.filterGroup.operator, view.filterGroup.filters))
  if (query.filters.length)
    filters.push(
      nested(
        query.match === 'any' ? 'or' : 'and',
        query.filters.map((filter) => ({
          field_id: filter.field,
          filter_type: 'text',
          json: { predicate: filter.predicate, operand: filter.operand },
        }))
      )
    )
  let none = false
  if (query.search) {
    const searched = searchedFields(category)
    none = searched.length === 0
    filters.push(
      nested(
        'or',
        searched.map((field) => ({
          field_id: field.id,
          filter_type: 'text',
          json: { predicate: 'contains', operand: query.search },
        }))
      )
    )
  }
  const filterRowIds = filters.length
    ? { applyViewFilters: { filterGroup: { operator: 'and' as const, filters } } }
    : undefined
  return { filterRowIds, none }
}

/** The fields a search looks into (`contains`): text, choices, links and people, not encrypted. */
export function searchedFields(category: CategoryMeta): FieldDef[] {
  return category.fields.filter((field) => SEARCHED_KINDS.has(kindOf(field)) && !isEncrypted(field))
}

function nested(operator: 'and' | 'or', filters: FilterSpec[]): FilterSpec {
  return { field_id: null, filter_type: 'group', json: { predicate: 'group', operator, filters } }
}
