import { rpcError } from '#core/rpc/errors'
import { parseBoundedJson } from '#core/rpc/nesting'
import { TABLE_LIMITS } from './limits.js'

/** Every field type a category can hold (issue 5, part 2). */
export const FIELD_TYPES = [
  'shorttext',
  'mediumtext',
  'double',
  'integer',
  'date',
  'checkbox',
  'enum',
  'link',
  'lookup',
  'rollup',
  'formula',
  'files',
  'user',
  'email',
  'phone',
  'url',
  'autoincrement',
  'created_time',
  'modified_time',
  'created_by',
  'modified_by',
  'comments',
  'activity',
  'smarttext',
] as const

export type FieldType = (typeof FIELD_TYPES)[number]

export const ROLLUP_FUNCTIONS = ['count', 'sum', 'min', 'max', 'avg'] as const
export type RollupFunction = (typeof ROLLUP_FUNCTIONS)[number]

export interface EnumColors {
  values: { value: string; color: string }[]
  strict: boolean
  displayColors: boolean
}

/** Per-type settings kept in table_fields.options. */
export interface FieldOptions {
  /** enum: the allowed values (also the `values` of the field definition). */
  values?: string[]
  enumColors?: EnumColors
  /** enum, link: several values per cell. */
  multiple?: boolean
  /** date: display format (client side), and whether the value carries a time. */
  dateFormat?: string
  withTime?: boolean
  /** double: display format (client side), e.g. '0.00'. */
  numformat?: string
  /** link: the linked category, and the view of it whose rows the link may point to (0 or absent: all). */
  linkCatId?: number
  linkViewId?: number
  /** lookup, rollup: the link field of this category to go through, and the field read in the linked category. */
  linkFieldId?: number
  targetFieldId?: number
  rollup?: RollupFunction
  /** formula: the expression ({Field name} or {f<id>} references) and its result type. */
  formula?: string
  resultType?: 'number' | 'text'
  /** smarttext: the template ({Field name}, {code} or {f<id>} placeholders), rendered as text or html. */
  template?: string
  templateFormat?: 'text' | 'html'
  /** An encrypted field: its key's salt and its password's verifier (services/field_encryption.ts; never answered). */
  encryption?: { salt: string; verifier: string }
}

/** How a type is filtered and compared. */
export type TypeKind =
  'text' | 'number' | 'date' | 'bool' | 'enum' | 'multi' | 'link' | 'user' | 'files' | 'none'

/** How a field is stored in tt_<categoryId>. */
export type Storage = 'string' | 'text' | 'double' | 'bigint' | 'boolean' | 'date' | 'none'

export interface FieldDef {
  id: number
  categoryId: number
  name: string
  code: string | null
  fixedCode: string
  type: FieldType
  order: number
  description: string | null
  readOnly: boolean
  options: FieldOptions
  /** Physical column (null for system-backed and column-less types). */
  column: string | null
  lastModified: number
}

/** System columns of every row table, and the types that read them. */
export const SYSTEM_COLUMNS: Partial<Record<FieldType, string>> = {
  created_time: 'created_at',
  modified_time: 'updated_at',
  created_by: 'created_by',
  modified_by: 'updated_by',
}

/** Types whose value the server computes: writes to them are ignored. */
export const COMPUTED_TYPES = new Set<FieldType>([
  'lookup',
  'rollup',
  'formula',
  'autoincrement',
  'created_time',
  'modified_time',
  'created_by',
  'modified_by',
  'comments',
  'activity',
])

export function storageOf(field: Pick<FieldDef, 'type' | 'options'>): Storage {
  // Sealed values are longer than their plaintext (nonce, tag, base64).
  if (field.options.encryption) return 'text'
  switch (field.type) {
    case 'shorttext':
    case 'email':
    case 'phone':
    case 'url':
    case 'user':
      return 'string'
    case 'mediumtext':
    case 'smarttext':
    case 'lookup':
    case 'files':
    case 'link':
      return 'text'
    case 'enum':
      return field.options.multiple ? 'text' : 'string'
    case 'double':
    case 'rollup':
      return 'double'
    case 'formula':
      return field.options.resultType === 'text' ? 'text' : 'double'
    case 'integer':
    case 'autoincrement':
      return 'bigint'
    case 'checkbox':
      return 'boolean'
    case 'date':
      return 'date'
    default:
      return 'none'
  }
}

export function kindOf(field: Pick<FieldDef, 'type' | 'options'>): TypeKind {
  switch (field.type) {
    case 'shorttext':
    case 'mediumtext':
    case 'smarttext':
    case 'email':
    case 'phone':
    case 'url':
    case 'lookup':
      return 'text'
    case 'formula':
      return field.options.resultType === 'text' ? 'text' : 'number'
    case 'double':
    case 'integer':
    case 'autoincrement':
    case 'rollup':
      return 'number'
    case 'date':
    case 'created_time':
    case 'modified_time':
      return 'date'
    case 'checkbox':
      return 'bool'
    case 'enum':
      return field.options.multiple ? 'multi' : 'enum'
    case 'link':
      return 'link'
    case 'user':
    case 'created_by':
    case 'modified_by':
      return 'user'
    case 'files':
      return 'files'
    default:
      return 'none'
  }
}

/** The SQL column a field reads from (its own column or a system column); null when it has none. */
export function sqlColumnOf(field: FieldDef): string | null {
  return SYSTEM_COLUMNS[field.type] ?? field.column
}

/** Whether a multi-valued field keeps its values in a side table (tt_<cat>_m<field>). */
export const hasSideTable = (field: Pick<FieldDef, 'type' | 'options'>) =>
  field.type === 'link' || (field.type === 'enum' && Boolean(field.options.multiple))

export const sideTableName = (categoryId: number, fieldId: number) => `tt_${categoryId}_m${fieldId}`
export const rowTableName = (categoryId: number) => `tt_${categoryId}`
/** The cached display text of a link field sits next to its id list. */
export const linkTextColumn = (column: string) => `${column}_t`

// ---------------------------------------------------------------------------
// Input conversion: wire string (or JSON value) -> stored value

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** 'YYYY-MM-DD HH:MM:SS' in UTC, the stored form of times (sorts and compares as text). */
export function formatDateTime(date: Date, withTime = true) {
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`
  return withTime
    ? `${day} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
    : day
}

const DATE_RE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/
const FR_DATE_RE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$/

/** Parses the date forms clients send; null when it is not a real date. */
export function parseDate(raw: string): Date | null {
  const text = raw.trim()
  if (/^\d{9,11}$/.test(text)) return new Date(Number(text) * 1000)
  let parts: (string | undefined)[] | null = null
  let zone: string | undefined
  const iso = DATE_RE.exec(text)
  if (iso) {
    parts = [iso[1], iso[2], iso[3], iso[4], iso[5], iso[6]]
    zone = iso[7]
  } else {
    const fr = FR_DATE_RE.exec(text)
    if (fr) parts = [fr[3], fr[2], fr[1], fr[4], fr[5], fr[6]]
  }
  if (!parts) return null
  const [y, m, d, hh, mm, ss] = parts.map((part) => (part === undefined ? 0 : Number(part)))
  if (m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59) return null
  let date = new Date(Date.UTC(y, m - 1, d, hh, mm, ss))
  if (date.getUTCMonth() !== m - 1) return null // 2025-02-31
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1
    const digits = zone.slice(1).replace(':', '')
    const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)))
    date = new Date(date.getTime() - offset * 60_000)
  }
  return date
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE_RE = /^\+?[0-9 ().\-/]{3,32}$/

const badValue = (field: FieldDef, reason: string) =>
  rpcError(
    'INVALID_PARAMETER',
    `Invalid value for field "${field.name}" (${field.id}): ${reason}`,
    {
      field: field.name,
      fieldId: field.id,
    }
  )

/** A raw cell value as a string (JSON values keep their JSON form). */
export function rawText(raw: unknown): string {
  if (raw === null || raw === undefined) return ''
  if (typeof raw === 'string') return raw
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw)
  return JSON.stringify(raw)
}

/** A list value: a JSON array, a PHP bracket object {"0": a, "1": b}, or a separated string. */
export function rawList(raw: unknown, separator: string): string[] {
  if (Array.isArray(raw)) return raw.map(rawText).filter((item) => item !== '')
  if (raw && typeof raw === 'object')
    return Object.values(raw)
      .map(rawText)
      .filter((item) => item !== '')
  const text = rawText(raw).trim()
  if (text === '') return []
  if (text.startsWith('[')) {
    try {
      const parsed = parseBoundedJson(text)
      if (Array.isArray(parsed)) return parsed.map(rawText).filter((item) => item !== '')
    } catch {
      // not JSON: fall through to the separator form
    }
  }
  return text
    .split(separator || ',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

export interface Converted {
  /** The value for the field's main column. */
  value: string | number | boolean | null
  /** Multi-valued fields: the values for the side table (link: target row ids). */
  list?: (string | number)[]
}

/**
 * Validates and converts one wire value for a stored field. Throws a nok
 * naming the field when the value does not fit the type. Links are checked
 * for existence by the caller (one query per request, not per cell).
 */
export function convertInput(field: FieldDef, raw: unknown, separator = ','): Converted {
  const text = rawText(raw)
  const trimmed = text.trim()
  switch (field.type) {
    case 'shorttext':
      if (text.length > 255) throw badValue(field, 'more than 255 characters')
      return { value: text === '' ? null : text }
    case 'mediumtext':
    case 'smarttext':
      if (text.length > TABLE_LIMITS.longTextLength)
        throw badValue(field, `more than ${TABLE_LIMITS.longTextLength} characters`)
      return { value: text === '' ? null : text }
    case 'email':
      if (trimmed !== '' && !EMAIL_RE.test(trimmed))
        throw badValue(field, `"${trimmed}" is not an e-mail address`)
      return { value: trimmed === '' ? null : trimmed }
    case 'phone':
      if (trimmed !== '' && !PHONE_RE.test(trimmed))
        throw badValue(field, `"${trimmed}" is not a phone number`)
      return { value: trimmed === '' ? null : trimmed }
    case 'url':
      if (trimmed !== '' && !/^([a-z][a-z0-9+.-]*:\/\/|www\.)\S+$/i.test(trimmed)) {
        throw badValue(field, `"${trimmed}" is not a URL`)
      }
      if (trimmed.length > 255) throw badValue(field, 'more than 255 characters')
      return { value: trimmed === '' ? null : trimmed }
    case 'double': {
      if (trimmed === '') return { value: null }
      const normalized = /^-?\d+,\d+$/.test(trimmed) ? trimmed.replace(',', '.') : trimmed
      const number = Number(normalized)
      if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(normalized) || !Number.isFinite(number)) {
        throw badValue(field, `"${trimmed}" is not a number`)
      }
      return { value: number }
    }
    case 'integer': {
      if (trimmed === '') return { value: null }
      if (!/^[-+]?\d+(\.0*)?$/.test(trimmed))
        throw badValue(field, `"${trimmed}" is not an integer`)
      const number = Number.parseInt(trimmed, 10)
      if (!Number.isSafeInteger(number)) throw badValue(field, `"${trimmed}" is out of range`)
      return { value: number }
    }
    case 'date': {
      if (trimmed === '') return { value: null }
      const date = parseDate(trimmed)
      if (!date)
        throw badValue(field, `"${trimmed}" is not a date (YYYY-MM-DD or YYYY-MM-DD HH:MM:SS)`)
      return { value: formatDateTime(date, Boolean(field.options.withTime)) }
    }
    case 'checkbox': {
      const lower = trimmed.toLowerCase()
      if (['1', 'true', 'on', 'yes'].includes(lower)) return { value: true }
      if (['0', 'false', 'off', 'no', ''].includes(lower)) return { value: false }
      throw badValue(field, `"${trimmed}" is not a checkbox value (true/false, 1/0)`)
    }
    case 'enum': {
      const allowed = field.options.values ?? []
      const strict = field.options.enumColors?.strict ?? false
      if (field.options.multiple) {
        const list = [...new Set(rawList(raw, separator))]
        for (const item of list) {
          if (strict && !allowed.includes(item))
            throw badValue(field, `"${item}" is not one of its values`)
        }
        return { value: list.length ? JSON.stringify(list) : null, list }
      }
      if (trimmed === '') return { value: null }
      if (strict && !allowed.includes(trimmed))
        throw badValue(field, `"${trimmed}" is not one of its values`)
      if (trimmed.length > 255) throw badValue(field, 'more than 255 characters')
      return { value: trimmed }
    }
    case 'link': {
      const ids = rawList(raw, separator).map((item) => {
        if (!/^\d+$/.test(item)) throw badValue(field, `"${item}" is not a row id`)
        return Number(item)
      })
      const unique = [...new Set(ids)]
      if (!field.options.multiple && unique.length > 1)
        throw badValue(field, 'this link holds one row only')
      return { value: unique.length ? JSON.stringify(unique) : null, list: unique }
    }
    case 'files': {
      if (trimmed === '' || trimmed === '[]' || trimmed === 'null') return { value: null }
      if (typeof raw === 'object' && raw !== null) return { value: JSON.stringify(raw) }
      if (trimmed.length > TABLE_LIMITS.longTextLength)
        throw badValue(field, `more than ${TABLE_LIMITS.longTextLength} characters`)
      try {
        return { value: JSON.stringify(parseBoundedJson(trimmed)) }
      } catch {
        throw badValue(field, 'files are given as JSON')
      }
    }
    case 'user':
      if (trimmed.length > 191) throw badValue(field, 'not a user code')
      return { value: trimmed === '' ? null : trimmed }
    default:
      return { value: null }
  }
}

// ---------------------------------------------------------------------------
// Output: stored value -> wire value (numbers as numbers, booleans as booleans)

export interface WireCell {
  value: unknown
  text?: string
}

/** Where a page read puts a comment cell's value on its row (commentsService.attach). */
export const commentCellKey = (fieldId: number) => `quire_comments_${fieldId}`
/** Where a page read puts an activity cell ({last, total}) on its row (HistoryService.attach). */
export const activityCellKey = (fieldId: number) => `quire_activity_${fieldId}`

export function serializeCell(field: FieldDef, row: Record<string, any>): WireCell {
  const column = sqlColumnOf(field)
  const stored = column ? row[column] : null
  switch (kindOf(field)) {
    case 'number':
      return { value: stored === null || stored === undefined ? null : Number(stored) }
    case 'bool':
      return { value: Boolean(stored) && stored !== '0' }
    case 'multi': {
      const list = parseJsonArray(stored)
      return { value: list, text: list.join(', ') }
    }
    case 'link': {
      const ids = parseJsonArray(stored).map(Number)
      const text = row[linkTextColumn(column!)] ?? ''
      return { value: ids, text }
    }
    case 'files':
      return {
        value: stored === null || stored === undefined || stored === '' ? null : safeJson(stored),
      }
    case 'none': {
      if (field.type === 'activity') {
        const cell = row[activityCellKey(field.id)]
        return cell ? { value: cell, text: cell.last.m } : { value: null }
      }
      return { value: field.type === 'comments' ? (row[commentCellKey(field.id)] ?? null) : null }
    }
    default:
      return { value: stored ?? null }
  }
}

function parseJsonArray(value: unknown): any[] {
  if (value === null || value === undefined || value === '') return []
  if (Array.isArray(value)) return value
  const parsed = safeJson(String(value))
  return Array.isArray(parsed) ? parsed : []
}

function safeJson(value: unknown) {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

/** The display text of a stored cell (lookups and link captions show it). */
export function displayText(field: FieldDef, row: Record<string, any>): string {
  const cell = serializeCell(field, row)
  if (cell.text !== undefined) return cell.text
  if (cell.value === null || cell.value === undefined) return ''
  if (typeof cell.value === 'object') return JSON.stringify(cell.value)
  return String(cell.value)
}
