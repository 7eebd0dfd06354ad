import { serializeCell, type FieldDef } from '../lib/field_types.js'
import type { Row } from '../lib/row_sql.js'
import type { RowFieldChange } from '../events.js'
import type { CategoryMeta } from './meta_service.js'

/**
 * Old and new values of the fields a write touched (the outbox topic
 * `tables:rows_changed`, events.ts RowsChanging), in their wire form.
 * `before` null: a created row; `after` null: a deleted row.
 */
export function fieldChanges(
  category: CategoryMeta,
  columns: Iterable<string> | null,
  before: Row | null,
  after: Row | null
): RowFieldChange[] {
  const wanted = columns ? new Set(columns) : null
  const fields = category.fields.filter(
    (field: FieldDef) => field.column && (!wanted || wanted.has(field.column))
  )
  return fields.map((field) => ({
    fieldId: field.id,
    name: field.name,
    old: before ? serializeCell(field, before).value : null,
    new: after ? serializeCell(field, after).value : null,
  }))
}
