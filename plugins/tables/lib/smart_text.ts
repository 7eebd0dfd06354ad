import { kindOf, serializeCell, type FieldDef } from './field_types.js'

/** Placeholders: `{Field name}`, `{code}` (a field's code or fixed code) or `{f<id>}`. */
const PLACEHOLDER = /\{([^{}]{1,255})\}/g

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char])

/**
 * A stored date ('YYYY-MM-DD[ HH:MM:SS]') in a field's PHP-style dateFormat
 * (d, j, m, n, Y, y, H, G, i, s; other characters as they are, `\` escapes).
 */
export function formatDate(stored: string, format: string | undefined): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?/.exec(stored)
  if (!match || !format) return stored
  const [, y, m, d, hh = '00', mm = '00', ss = '00'] = match
  const parts: Record<string, string> = {
    d,
    j: String(Number(d)),
    m,
    n: String(Number(m)),
    Y: y,
    y: y.slice(2),
    H: hh,
    G: String(Number(hh)),
    i: mm,
    s: ss,
  }
  let out = ''
  for (let i = 0; i < format.length; i++) {
    const char = format[i]
    if (char === '\\' && i + 1 < format.length) out += format[++i]
    else out += parts[char] ?? char
  }
  return out
}

/** A number in a numformat such as '0.00' (its decimals), else as it is. */
export function formatNumber(value: number, numformat: string | undefined): string {
  const decimals = /\.(0+)$/.exec(numformat ?? '')?.[1].length
  return decimals === undefined ? String(value) : value.toFixed(decimals)
}

/** The text of one cell in a smart text: per-type formatting; users by their names. */
export function cellText(
  field: FieldDef,
  row: Record<string, any>,
  userNames: Map<string, string>
): string {
  const cell = serializeCell(field, row)
  const value = cell.value
  if (cell.text !== undefined) return cell.text // links (captions), multi enums
  if (value === null || value === undefined || value === '') return ''
  switch (kindOf(field)) {
    case 'number':
      return formatNumber(Number(value), field.options.numformat)
    case 'date':
      return formatDate(String(value), field.options.dateFormat)
    case 'bool':
      return value ? 'yes' : 'no'
    case 'user':
      return userNames.get(String(value)) ?? String(value)
    case 'files':
      return Array.isArray(value)
        ? value.map((file: any) => String(file?.name ?? file?.filename ?? '')).join(', ')
        : ''
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value)
  }
}

/** The fields a template names, to know which users' names to read. */
export function placeholders(template: string, fields: FieldDef[]): FieldDef[] {
  const found = new Set<FieldDef>()
  for (const match of template.matchAll(PLACEHOLDER)) {
    const field = fieldOf(match[1], fields)
    if (field) found.add(field)
  }
  return [...found]
}

function fieldOf(name: string, fields: FieldDef[]): FieldDef | undefined {
  const key = name.trim()
  const id = /^f(\d+)$/.exec(key)?.[1]
  return (
    fields.find((field) => field.name === key) ??
    fields.find((field) => field.code === key || field.fixedCode === key) ??
    (id ? fields.find((field) => field.id === Number(id)) : undefined)
  )
}

/**
 * Renders a smart-text template from a row: each placeholder naming a field
 * becomes that cell's text (HTML-escaped for html output); a placeholder
 * naming no field stays as written, so its author sees it.
 */
export function renderTemplate(
  template: string,
  fields: FieldDef[],
  row: Record<string, any>,
  options: { html: boolean; userNames: Map<string, string> }
): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const field = fieldOf(name, fields)
    if (!field || field.type === 'smarttext') return whole
    const text = cellText(field, row, options.userNames)
    return options.html ? escapeHtml(text) : text
  })
}
