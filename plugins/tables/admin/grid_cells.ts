import type { FieldDef } from '../lib/field_types.js'

/** Longest cell text a grid page carries (the panel and the export have the whole text). */
const GRID_TEXT = 300

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`

/**
 * A cell as the grid shows it, from getTableValues' `rows` format ({value, text}): link
 * captions and lists as text, a checkbox as yes or no, a comment cell as its count, a files
 * cell as its file names.
 */
export function cellDisplay(
  field: FieldDef,
  cell: { value: unknown; text?: string } | undefined,
  limit = GRID_TEXT
): string {
  const text = cellText(field, cell)
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text
}

function cellText(field: FieldDef, cell: { value: unknown; text?: string } | undefined): string {
  if (!cell) return ''
  const value = cell.value as any
  if (field.type === 'checkbox') return value ? 'yes' : 'no'
  if (field.type === 'comments') return value?.summary ? plural(value.summary.total, 'comment') : ''
  if (field.type === 'files') {
    if (!Array.isArray(value)) return ''
    const names = value.map((entry) => (entry && typeof entry.name === 'string' ? entry.name : ''))
    return names.every(Boolean) ? names.join(', ') : plural(value.length, 'file')
  }
  if (cell.text !== undefined) return cell.text
  if (value === null || value === undefined) return ''
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** A value of a change (old or new) in words. */
function changeValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'empty'
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'empty'
  if (typeof value === 'object') return JSON.stringify(value)
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  const text = String(value)
  return text.length > 120 ? `${text.slice(0, 119)}…` : text
}

/** Where a change came from, in words. */
function sourceOf(operation: string): string {
  if (operation === 'console') return 'the console'
  if (operation === 'socket:13') return 'an app (live connection)'
  if (operation.startsWith('token:')) return 'a shared link'
  if (operation === 'rollBackBeforeChange') return 'a roll-back'
  return 'an app'
}

/** A getRowHistory change as the row panel lists it. */
export function changeDisplay(
  change: {
    id: number
    action: string
    c: number
    u: { n: string }
    operation: string
    old: unknown
    new: unknown
    onBehalfOf: { n: string } | null
  },
  fieldName: string
) {
  const who = change.onBehalfOf ? `${change.onBehalfOf.n} for ${change.u.n}` : change.u.n
  const what =
    change.action === 'create'
      ? `set ${fieldName} to ${changeValue(change.new)}`
      : change.action === 'delete'
        ? `deleted the row (${fieldName} was ${changeValue(change.old)})`
        : `changed ${fieldName} from ${changeValue(change.old)} to ${changeValue(change.new)}`
  return {
    id: change.id,
    at: change.c * 1000,
    text: `${who} ${what}`,
    via: sourceOf(change.operation),
  }
}
