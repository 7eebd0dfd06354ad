import { quoteId } from '#core/native_sql'
import { rpcError } from '#core/rpc/errors'
import {
  formatDateTime,
  kindOf,
  linkTextColumn,
  parseDate,
  rawList,
  rawText,
  sideTableName,
  sqlColumnOf,
  type FieldDef,
  type TypeKind,
} from './field_types.js'
import { asList, asObject } from './wire.js'
import { parseBoundedJson } from '#core/rpc/nesting'

/** A filter as the wire carries it (saved: numeric id; unsaved: any non-numeric id such as `tmp0`). */
export interface FilterSpec {
  id?: number | string
  field_id: number | null
  filter_type: string
  json: { predicate: string; operand?: unknown; operator?: 'and' | 'or'; filters?: FilterSpec[] }
  lastModified?: number
}

export interface FilterGroupSpec {
  id?: number | string
  operator: 'and' | 'or'
  filters: FilterSpec[]
  lastModified?: number
}

export interface CompiledFilter {
  /** SQL condition over the row table (aliased `t`), or null when nothing filters. */
  where: { sql: string; bindings: unknown[] } | null
  /** Group-by first, then sorts. */
  orderBy: { column: string; direction: 'asc' | 'desc' }[]
  /** Columns that filters or sorts use (indexes for saved views). */
  usedFields: FieldDef[]
}

export interface FilterContext {
  /** The acting user's code, for `is me`; null for anonymous readers of public tables. */
  userCode: string | null
  now?: Date
  /** Text predicates the text index answers (services/text_index.ts planTextIndex); absent: scans. */
  textIndex?: TextIndexPlan
}

/**
 * The text index's plan for one compilation: `textIndexKey(column, text)` -> the condition on
 * `t.id` naming the rows the column's text index holds `text` in (services/text_index.ts: an
 * FTS5 MATCH on SQLite, a gram table's rows on MariaDB), for contains, begins-with and
 * ends-with on `text`.
 */
export type TextIndexPlan = Map<string, { sql: string; bindings: unknown[] }>
export const textIndexKey = (column: string, text: string) => `${column}\u0000${text}`

/** `text` as an FTS5 phrase: its double quotes doubled (nothing else is syntax inside one). */
export const ftsPhrase = (text: string) => `"${text.replace(/"/g, '""')}"`

/** Restricts `t.id` to the rows whose text index `index` (an FTS5 table) holds `text`. */
export function textIndexCondition(index: string, text: string): Sql {
  const name = quoteId(index)
  return {
    sql: `t.id IN (SELECT rowid FROM ${name} WHERE ${name} MATCH ?)`,
    bindings: [ftsPhrase(text)],
  }
}

const SORT_TYPES = new Set(['sort', 'groupby', 'order'])

/** Predicate spellings clients use -> canonical name. */
const ALIASES: Record<string, string> = {
  'is': 'is',
  '=': 'is',
  '==': 'is',
  'eq': 'is',
  'equals': 'is',
  'equal': 'is',
  'is_equal_to': 'is',
  'is_not': 'is_not',
  'isnot': 'is_not',
  'not': 'is_not',
  '!=': 'is_not',
  '<>': 'is_not',
  '≠': 'is_not',
  'ne': 'is_not',
  'neq': 'is_not',
  'not_equal': 'is_not',
  '<': 'lt',
  'lt': 'lt',
  'less_than': 'lt',
  '<=': 'lte',
  '≤': 'lte',
  'lte': 'lte',
  'le': 'lte',
  '>': 'gt',
  'gt': 'gt',
  'greater_than': 'gt',
  '>=': 'gte',
  '≥': 'gte',
  'gte': 'gte',
  'ge': 'gte',
  'between': 'between',
  'is_between': 'between',
  'contains': 'contains',
  'like': 'contains',
  'has': 'contains',
  'does_not_contain': 'does_not_contain',
  'doesnotcontain': 'does_not_contain',
  'not_contains': 'does_not_contain',
  'notcontains': 'does_not_contain',
  'not_like': 'does_not_contain',
  'begins_with': 'begins_with',
  'beginswith': 'begins_with',
  'starts_with': 'begins_with',
  'startswith': 'begins_with',
  'ends_with': 'ends_with',
  'endswith': 'ends_with',
  'is_empty': 'is_empty',
  'isempty': 'is_empty',
  'empty': 'is_empty',
  'is_null': 'is_empty',
  'is_not_empty': 'is_not_empty',
  'isnotempty': 'is_not_empty',
  'not_empty': 'is_not_empty',
  'notempty': 'is_not_empty',
  'is_not_null': 'is_not_empty',
  'any_of': 'any_of',
  'anyof': 'any_of',
  'is_any_of': 'any_of',
  'in': 'any_of',
  'has_any_of': 'any_of',
  'all_of': 'all_of',
  'allof': 'all_of',
  'has_all_of': 'all_of',
  'is_all_of': 'all_of',
  'none_of': 'none_of',
  'noneof': 'none_of',
  'is_none_of': 'none_of',
  'not_in': 'none_of',
  'has_none_of': 'none_of',
  'checked': 'checked',
  'is_checked': 'checked',
  'unchecked': 'unchecked',
  'is_unchecked': 'unchecked',
  'not_checked': 'unchecked',
  'is_me': 'is_me',
  'me': 'is_me',
  'is_not_me': 'is_not_me',
  'before': 'before',
  'is_before': 'before',
  'after': 'after',
  'is_after': 'after',
  'on': 'on',
  'is_on': 'on',
  'on_or_before': 'on_or_before',
  'is_on_or_before': 'on_or_before',
  'on_or_after': 'on_or_after',
  'is_on_or_after': 'on_or_after',
  'within': 'within',
  'is_within': 'within',
  'asc': 'asc',
  'desc': 'desc',
}

/** The documented catalogue: which predicates each kind of field accepts (README.md, "Filters"). */
const TEXT_PREDICATES = [
  'is',
  'is_not',
  'contains',
  'does_not_contain',
  'begins_with',
  'ends_with',
  'is_empty',
  'is_not_empty',
  'any_of',
  'none_of',
]

export const PREDICATES: Record<TypeKind, string[]> = {
  text: TEXT_PREDICATES,
  // Enums add all_of: every given value is selected.
  enum: [...TEXT_PREDICATES, 'all_of'],
  user: [
    'is',
    'is_not',
    'is_me',
    'is_not_me',
    'any_of',
    'none_of',
    'is_empty',
    'is_not_empty',
    'contains',
  ],
  number: ['is', 'is_not', 'lt', 'lte', 'gt', 'gte', 'between', 'is_empty', 'is_not_empty'],
  date: [
    'is',
    'is_not',
    'on',
    'before',
    'after',
    'on_or_before',
    'on_or_after',
    'between',
    'within',
    'is_empty',
    'is_not_empty',
  ],
  bool: ['checked', 'unchecked', 'is', 'is_not'],
  multi: [
    'any_of',
    'all_of',
    'none_of',
    'is',
    'is_not',
    'contains',
    'does_not_contain',
    'is_empty',
    'is_not_empty',
  ],
  link: [
    'any_of',
    'all_of',
    'none_of',
    'is',
    'is_not',
    'contains',
    'does_not_contain',
    'is_empty',
    'is_not_empty',
  ],
  files: ['is_empty', 'is_not_empty'],
  none: [],
}

export const canonicalPredicate = (raw: unknown) => {
  const key = rawText(raw)
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_')
  return ALIASES[key] ?? key
}

/** `!` escapes LIKE wildcards: a backslash would itself need escaping in MySQL string literals. */
export const likeEscape = (text: string) => text.replace(/[!%_]/g, (char) => `!${char}`)

const invalid = (message: string) => rpcError('INVALID_PARAMETER', message)

// ---------------------------------------------------------------------------
// Normalisation of the wire forms (JSON string, JSON object, PHP bracket object)

export function normalizeFilter(raw: unknown): FilterSpec {
  const object = asObject(raw, 'filter')
  const json =
    object.json === undefined || object.json === '' ? {} : asObject(object.json, 'filter json')
  const nested = object.filters ?? json.filters
  const filterType =
    rawText(object.filter_type ?? (nested !== undefined ? 'group' : 'text')).trim() || 'text'
  if (filterType === 'group' || nested !== undefined) {
    const group = normalizeGroup({
      operator: object.operator ?? json.operator,
      filters: nested ?? [],
    })
    return {
      id: object.id as any,
      field_id: null,
      filter_type: 'group',
      json: { predicate: 'group', operator: group.operator, filters: group.filters },
    }
  }
  const fieldId = Number(rawText(object.field_id ?? object.fieldId))
  if (!Number.isInteger(fieldId) || fieldId <= 0) throw invalid('A filter needs a field_id')
  return {
    id: object.id as any,
    field_id: fieldId,
    filter_type: filterType,
    json: {
      predicate: rawText(json.predicate ?? object.predicate),
      operand: json.operand ?? object.operand,
    },
  }
}

export function normalizeGroup(raw: unknown): FilterGroupSpec {
  const object = asObject(raw, 'filterGroup')
  const operator =
    rawText(object.operator ?? 'and')
      .trim()
      .toLowerCase() || 'and'
  if (operator !== 'and' && operator !== 'or')
    throw invalid(`Unknown filter group operator "${operator}"`)
  const filters =
    object.filters === undefined || object.filters === '' ? [] : asList(object.filters, 'filters')
  return { id: object.id as any, operator, filters: filters.map(normalizeFilter) }
}

// ---------------------------------------------------------------------------
// Compilation

interface Sql {
  sql: string
  bindings: unknown[]
}

const startOfDay = (date: Date) =>
  new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
const addDays = (date: Date, days: number) => new Date(date.getTime() + days * 86_400_000)
const day = (date: Date) => formatDateTime(date, false)

/** Relative date words: today, yesterday, tomorrow; else a date. Returns the start of that day. */
function operandDay(field: FieldDef, raw: unknown, now: Date): Date {
  const text = rawText(raw).trim().toLowerCase()
  const today = startOfDay(now)
  if (text === 'today' || text === 'now') return today
  if (text === 'yesterday') return addDays(today, -1)
  if (text === 'tomorrow') return addDays(today, 1)
  const date = parseDate(text)
  if (!date) throw invalid(`Filter on "${field.name}": "${rawText(raw)}" is not a date`)
  return startOfDay(date)
}

/** `within` ranges: [start, end) in days. */
function withinRange(field: FieldDef, raw: unknown, now: Date): [Date, Date] {
  const today = startOfDay(now)
  let word: string
  let count = 0
  if (raw && typeof raw === 'object') {
    const object = asObject(raw, 'operand')
    word = rawText(object.within ?? object.period ?? object.value ?? '')
      .trim()
      .toLowerCase()
    count = Number(rawText(object.n ?? object.days ?? object.count ?? 0))
  } else {
    word = rawText(raw)
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_')
  }
  const numbered = /^(last|past|next)_(\d+)_days?$/.exec(word)
  if (numbered) {
    word = `${numbered[1] === 'next' ? 'next' : 'last'}_n_days`
    count = Number(numbered[2])
  }
  const weekStart = addDays(today, -((today.getUTCDay() + 6) % 7))
  const monthStart = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))
  switch (word) {
    case 'today':
      return [today, addDays(today, 1)]
    case 'yesterday':
      return [addDays(today, -1), today]
    case 'tomorrow':
      return [addDays(today, 1), addDays(today, 2)]
    case 'this_week':
      return [weekStart, addDays(weekStart, 7)]
    case 'last_week':
    case 'previous_week':
      return [addDays(weekStart, -7), weekStart]
    case 'next_week':
      return [addDays(weekStart, 7), addDays(weekStart, 14)]
    case 'past_week':
      return [addDays(today, -6), addDays(today, 1)]
    case 'this_month':
      return [monthStart, new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1))]
    case 'last_month':
    case 'previous_month':
      return [new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1)), monthStart]
    case 'next_month':
      return [
        new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1)),
        new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 2, 1)),
      ]
    case 'this_year':
      return [
        new Date(Date.UTC(today.getUTCFullYear(), 0, 1)),
        new Date(Date.UTC(today.getUTCFullYear() + 1, 0, 1)),
      ]
    case 'last_n_days':
      if (!Number.isInteger(count) || count < 1) break
      return [addDays(today, -(count - 1)), addDays(today, 1)]
    case 'next_n_days':
      if (!Number.isInteger(count) || count < 1) break
      return [today, addDays(today, count)]
  }
  throw invalid(`Filter on "${field.name}": unknown period "${rawText(raw)}" for within`)
}

function operandPair(field: FieldDef, raw: unknown): [unknown, unknown] {
  if (raw && typeof raw === 'object') {
    if (Array.isArray(raw)) return [raw[0], raw[1]]
    const object = raw as Record<string, unknown>
    if ('from' in object || 'to' in object) return [object.from, object.to]
    if ('min' in object || 'max' in object) return [object.min, object.max]
    const values = Object.values(object)
    return [values[0], values[1]]
  }
  const text = rawText(raw).trim()
  if (text.startsWith('[')) {
    try {
      const parsed = parseBoundedJson(text)
      if (Array.isArray(parsed)) return [parsed[0], parsed[1]]
    } catch {
      // fall through
    }
  }
  const parts = text.split(/[;,]| and /)
  if (parts.length !== 2) throw invalid(`Filter on "${field.name}": between needs two values`)
  return [parts[0].trim(), parts[1].trim()]
}

function numberOperand(field: FieldDef, raw: unknown): number {
  const text = rawText(raw)
    .trim()
    .replace(/^(-?\d+),(\d+)$/, '$1.$2')
  const number = Number(text)
  if (text === '' || !Number.isFinite(number))
    throw invalid(`Filter on "${field.name}": "${rawText(raw)}" is not a number`)
  return number
}

export class FilterCompiler {
  constructor(
    private fields: FieldDef[],
    private context: FilterContext
  ) {}

  private field(id: number | null): FieldDef {
    const field = this.fields.find((candidate) => candidate.id === id)
    if (!field) throw invalid(`Filter field ${id} is not a field of this table`)
    // The table holds only ciphertext (services/field_encryption.ts): nothing to compare.
    if (field.options.encryption)
      throw rpcError(
        'ENCRYPTED_FIELD_UNSEARCHABLE',
        `Field "${field.name}" (${field.id}) is encrypted: it cannot be filtered, sorted or grouped on`,
        { fieldId: field.id }
      )
    return field
  }

  compile(group: FilterGroupSpec | null): CompiledFilter {
    const used: FieldDef[] = []
    const orderBy: CompiledFilter['orderBy'] = []
    const groupBy: CompiledFilter['orderBy'] = []
    const where = group ? this.group(group, used, orderBy, groupBy) : null
    return { where, orderBy: [...groupBy, ...orderBy], usedFields: used }
  }

  private group(
    group: FilterGroupSpec,
    used: FieldDef[],
    orderBy: CompiledFilter['orderBy'],
    groupBy: CompiledFilter['orderBy']
  ): Sql | null {
    const parts: Sql[] = []
    for (const filter of group.filters) {
      if (filter.filter_type === 'group') {
        const nested = this.group(
          { operator: filter.json.operator ?? 'and', filters: filter.json.filters ?? [] },
          used,
          orderBy,
          groupBy
        )
        if (nested) parts.push(nested)
        continue
      }
      const field = this.field(filter.field_id)
      if (SORT_TYPES.has(filter.filter_type)) {
        const direction = canonicalPredicate(filter.json.predicate || 'asc')
        if (direction !== 'asc' && direction !== 'desc') {
          throw invalid(`Unknown sort direction "${filter.json.predicate}" (asc or desc)`)
        }
        const column = this.sortColumn(field)
        used.push(field)
        ;(filter.filter_type === 'groupby' ? groupBy : orderBy).push({ column, direction })
        continue
      }
      used.push(field)
      parts.push(this.predicate(field, filter.json.predicate, filter.json.operand))
    }
    if (parts.length === 0) return null
    if (parts.length === 1) return parts[0]
    return {
      sql: parts.map((part) => `(${part.sql})`).join(group.operator === 'or' ? ' OR ' : ' AND '),
      bindings: parts.flatMap((part) => part.bindings),
    }
  }

  private sortColumn(field: FieldDef) {
    const column = sqlColumnOf(field)
    if (!column) throw invalid(`Field "${field.name}" cannot be sorted`)
    return field.type === 'link' ? linkTextColumn(column) : column
  }

  predicate(field: FieldDef, rawPredicate: unknown, operand: unknown): Sql {
    const kind = kindOf(field)
    const predicate = canonicalPredicate(rawPredicate)
    if (!PREDICATES[kind].includes(predicate)) {
      throw invalid(
        `Unknown predicate "${rawText(rawPredicate)}" for field "${field.name}" of type ${field.type}`
      )
    }
    const columnName = sqlColumnOf(field)!
    const col = `t.${quoteId(columnName)}`
    const now = this.context.now ?? new Date()

    if (predicate === 'is_empty') {
      return kind === 'text' || kind === 'enum' || kind === 'user' || kind === 'files'
        ? { sql: `${col} IS NULL OR ${col} = ''`, bindings: [] }
        : { sql: `${col} IS NULL`, bindings: [] }
    }
    if (predicate === 'is_not_empty') {
      return kind === 'text' || kind === 'enum' || kind === 'user' || kind === 'files'
        ? { sql: `${col} IS NOT NULL AND ${col} <> ''`, bindings: [] }
        : { sql: `${col} IS NOT NULL`, bindings: [] }
    }

    switch (kind) {
      case 'text':
      case 'enum':
      case 'user':
        return this.textPredicate(field, col, predicate, operand)
      case 'number':
        return this.numberPredicate(field, col, predicate, operand)
      case 'date':
        return this.datePredicate(field, col, predicate, operand, now)
      case 'bool': {
        let checked = predicate === 'checked'
        if (predicate === 'is' || predicate === 'is_not') {
          const text = rawText(operand).trim().toLowerCase()
          checked = ['1', 'true', 'on', 'yes', 'checked'].includes(text)
          if (predicate === 'is_not') checked = !checked
        }
        return checked
          ? { sql: `${col} = ?`, bindings: [true] }
          : { sql: `${col} IS NULL OR ${col} = ?`, bindings: [false] }
      }
      case 'multi':
      case 'link':
        return this.listPredicate(field, col, predicate, operand)
      default:
        throw invalid(`Field "${field.name}" cannot be filtered`)
    }
  }

  /**
   * A LIKE on the column, narrowed first to the rows the text index holds `text` in when the
   * plan says it answers: the LIKE still decides (the index folds more than LIKE does).
   */
  private like(field: FieldDef, col: string, text: string, pattern: string): Sql {
    const like = { sql: `${col} LIKE ? ESCAPE '!'`, bindings: [pattern] }
    const narrowed = field.column
      ? this.context.textIndex?.get(textIndexKey(field.column, text))
      : null
    if (!narrowed) return like
    return { sql: `${narrowed.sql} AND ${like.sql}`, bindings: [...narrowed.bindings, pattern] }
  }

  private textPredicate(field: FieldDef, col: string, predicate: string, operand: unknown): Sql {
    const text = rawText(operand)
    switch (predicate) {
      case 'is':
        return { sql: `${col} = ?`, bindings: [text] }
      case 'is_not':
        return { sql: `${col} IS NULL OR ${col} <> ?`, bindings: [text] }
      case 'contains':
        return this.like(field, col, text, `%${likeEscape(text)}%`)
      case 'does_not_contain':
        return {
          sql: `${col} IS NULL OR ${col} NOT LIKE ? ESCAPE '!'`,
          bindings: [`%${likeEscape(text)}%`],
        }
      case 'begins_with':
        return this.like(field, col, text, `${likeEscape(text)}%`)
      case 'ends_with':
        return this.like(field, col, text, `%${likeEscape(text)}`)
      case 'is_me':
      case 'is_not_me': {
        if (!this.context.userCode)
          return predicate === 'is_me'
            ? { sql: '1 = 0', bindings: [] }
            : { sql: '1 = 1', bindings: [] }
        return predicate === 'is_me'
          ? { sql: `${col} = ?`, bindings: [this.context.userCode] }
          : { sql: `${col} IS NULL OR ${col} <> ?`, bindings: [this.context.userCode] }
      }
      case 'any_of':
      case 'none_of':
      case 'all_of': {
        const values = rawList(operand, ',')
        if (values.length === 0)
          return predicate === 'none_of'
            ? { sql: '1 = 1', bindings: [] }
            : { sql: '1 = 0', bindings: [] }
        if (predicate === 'all_of' && new Set(values).size > 1)
          return { sql: '1 = 0', bindings: [] }
        const marks = values.map(() => '?').join(', ')
        return predicate === 'none_of'
          ? { sql: `${col} IS NULL OR ${col} NOT IN (${marks})`, bindings: values }
          : { sql: `${col} IN (${marks})`, bindings: values }
      }
    }
    throw invalid(`Unknown predicate "${predicate}" for field "${field.name}"`)
  }

  private numberPredicate(field: FieldDef, col: string, predicate: string, operand: unknown): Sql {
    if (predicate === 'between') {
      const [low, high] = operandPair(field, operand)
      return {
        sql: `${col} >= ? AND ${col} <= ?`,
        bindings: [numberOperand(field, low), numberOperand(field, high)],
      }
    }
    const value = numberOperand(field, operand)
    const op = { is: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' }[predicate as 'is']
    if (op) return { sql: `${col} ${op} ?`, bindings: [value] }
    return { sql: `${col} IS NULL OR ${col} <> ?`, bindings: [value] }
  }

  private datePredicate(
    field: FieldDef,
    col: string,
    predicate: string,
    operand: unknown,
    now: Date
  ): Sql {
    if (predicate === 'within') {
      const [start, end] = withinRange(field, operand, now)
      return { sql: `${col} >= ? AND ${col} < ?`, bindings: [day(start), day(end)] }
    }
    if (predicate === 'between') {
      const [low, high] = operandPair(field, operand)
      return {
        sql: `${col} >= ? AND ${col} < ?`,
        bindings: [day(operandDay(field, low, now)), day(addDays(operandDay(field, high, now), 1))],
      }
    }
    const start = operandDay(field, operand, now)
    const next = day(addDays(start, 1))
    switch (predicate) {
      case 'is':
      case 'on':
        return { sql: `${col} >= ? AND ${col} < ?`, bindings: [day(start), next] }
      case 'is_not':
        return { sql: `${col} IS NULL OR ${col} < ? OR ${col} >= ?`, bindings: [day(start), next] }
      case 'before':
        return { sql: `${col} < ?`, bindings: [day(start)] }
      case 'on_or_before':
        return { sql: `${col} < ?`, bindings: [next] }
      case 'after':
        return { sql: `${col} >= ?`, bindings: [next] }
      default:
        return { sql: `${col} >= ?`, bindings: [day(start)] }
    }
  }

  private listPredicate(field: FieldDef, col: string, predicate: string, operand: unknown): Sql {
    const side = quoteId(sideTableName(field.categoryId, field.id))
    if (predicate === 'contains' || predicate === 'does_not_contain') {
      const display = field.type === 'link' ? `t.${quoteId(linkTextColumn(field.column!))}` : col
      const pattern = `%${likeEscape(rawText(operand))}%`
      return predicate === 'contains'
        ? { sql: `${display} LIKE ? ESCAPE '!'`, bindings: [pattern] }
        : { sql: `${display} IS NULL OR ${display} NOT LIKE ? ESCAPE '!'`, bindings: [pattern] }
    }
    let values: (string | number)[] = rawList(operand, ',')
    if (field.type === 'link') {
      values = values.map((value) => {
        if (!/^\d+$/.test(String(value)))
          throw invalid(`Filter on "${field.name}": "${value}" is not a row id`)
        return Number(value)
      })
    }
    values = [...new Set(values)]
    if (values.length === 0) {
      return predicate === 'none_of' || predicate === 'is_not'
        ? { sql: '1 = 1', bindings: [] }
        : { sql: '1 = 0', bindings: [] }
    }
    const marks = values.map(() => '?').join(', ')
    const any = `SELECT s.row_id FROM ${side} s WHERE s.value IN (${marks})`
    switch (predicate) {
      case 'any_of':
        return { sql: `t.id IN (${any})`, bindings: values }
      case 'none_of':
        return { sql: `t.id NOT IN (${any})`, bindings: values }
      case 'all_of':
        return {
          sql: `t.id IN (${any} GROUP BY s.row_id HAVING COUNT(*) = ?)`,
          bindings: [...values, values.length],
        }
      case 'is':
        // exactly this set of values
        return {
          sql: `t.id IN (${any} GROUP BY s.row_id HAVING COUNT(*) = ?) AND t.id NOT IN (SELECT s2.row_id FROM ${side} s2 WHERE s2.value NOT IN (${marks}))`,
          bindings: [...values, values.length, ...values],
        }
      default:
        return {
          sql: `NOT (t.id IN (${any} GROUP BY s.row_id HAVING COUNT(*) = ?) AND t.id NOT IN (SELECT s2.row_id FROM ${side} s2 WHERE s2.value NOT IN (${marks})))`,
          bindings: [...values, values.length, ...values],
        }
    }
  }
}
