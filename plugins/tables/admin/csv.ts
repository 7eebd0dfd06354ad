/**
 * CSV as RFC 4180 writes it (comma, CRLF, a field quoted when it holds a comma, a quote, a line
 * break or edge spaces, its quotes doubled), plus one guard: a text a spreadsheet would run as a
 * formula (starting with =, +, -, @, a tab or a carriage return, and not a number) is written
 * with a leading apostrophe, so opening an export never runs what someone typed in a cell.
 */
export function csvField(value: string): string {
  let text = value
  if (/^[=+\-@\t\r]/.test(text) && !/^[+-]?\d+([.,]\d+)?([eE][+-]?\d+)?$/.test(text))
    text = `'${text}`
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One CSV record, its line end included. */
export function csvLine(values: string[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

/** The Content-Disposition of a table's export: its name, plain ASCII and UTF-8 (RFC 6266). */
export function csvFileName(tableName: string): string {
  const name = `${tableName.trim() || 'table'}.csv`
  const ascii = name.replace(/[^\x20-\x7e]|["\\/;]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
}
