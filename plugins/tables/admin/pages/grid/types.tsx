/** The props of the table grid page (TablesController.show). */

export type Editor = 'text' | 'longtext' | 'number' | 'date' | 'checkbox' | 'choice' | null

export interface GridField {
  id: number
  name: string
  type: string
  editor: Editor
  choices: string[]
  sortable: boolean
  predicates: { value: string; label: string; operand: boolean }[]
}

export interface GridFilter {
  field: number
  predicate: string
  operand: string
}

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

export interface GridRow {
  id: number
  number: number
  cells: string[]
}

export interface GridRows {
  items: GridRow[]
  total: number
  /** A search that scans counted only its first `total` rows: there are more. */
  more: boolean
  page: number
  perPage: number
  search: string
  /** Indexes this read built (a sort or a search of a big table, on first use). */
  built: { field: string; ms: number }[]
  error: string | null
}

export interface RowPanelData {
  id: number
  number?: number
  missing: boolean
  cells?: { name: string; text: string }[]
  comments?: {
    field: string
    comments: { id: number; author: string; at: number; text: string }[]
  }[]
  history?: { total: number; changes: { id: number; at: number; text: string; via: string }[] }
}

export interface GridProps {
  table: { id: number; name: string; book: string; bookId: number; owner: string }
  fields: GridField[]
  views: { id: number; name: string }[]
  pageSizes: number[]
  query: GridQuery
  edit: { allowed: boolean; reason: string }
  live: { channel: string; token: string }
  rows: GridRows
  panel: RowPanelData | null
}
