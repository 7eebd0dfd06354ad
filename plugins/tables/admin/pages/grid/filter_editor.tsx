import { usePage } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import { visit } from './navigation'
import type { GridField, GridFilter, GridQuery } from './types'

/**
 * The grid's filters: a field, a condition the field's kind allows (the view filter compiler's
 * predicates, in words) and a value; rows match all of them or any. Applying goes back to the
 * first page; the server compiles them as a view's filters.
 */
export function FilterEditor(props: { id: string; fields: GridField[]; query: GridQuery }) {
  const { url } = usePage()
  const filterable = props.fields.filter((field) => field.predicates.length > 0)
  const [drafts, setDrafts] = useState<GridFilter[]>(props.query.filters)
  const [match, setMatch] = useState(props.query.match)
  const fieldOf = (id: number) => filterable.find((field) => field.id === id)
  const change = (index: number, patch: Partial<GridFilter>) =>
    setDrafts(drafts.map((draft, at) => (at === index ? { ...draft, ...patch } : draft)))
  const add = () => {
    const field = filterable[0]
    if (field)
      setDrafts([...drafts, { field: field.id, predicate: field.predicates[0].value, operand: '' }])
  }
  const apply = (filters: GridFilter[]) =>
    visit(url, {
      filters: filters.length ? JSON.stringify(filters) : undefined,
      match: match === 'any' ? 'any' : undefined,
      page: undefined,
    })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    apply(drafts)
  }
  return (
    <section id={props.id} className="grid-filters" aria-label="Filters">
      <form onSubmit={submit}>
        {drafts.length === 0 && <p className="muted small">No filter: every row is shown.</p>}
        {drafts.map((draft, index) => {
          const field = fieldOf(draft.field) ?? filterable[0]
          const predicate = field?.predicates.find((entry) => entry.value === draft.predicate)
          return (
            <fieldset key={index} className="filter-line" data-filter={index}>
              <legend className="sr-only">Filter {index + 1}</legend>
              <label>
                Field
                <select
                  value={draft.field}
                  onChange={(event) => {
                    const next = fieldOf(Number(event.target.value))!
                    change(index, { field: next.id, predicate: next.predicates[0].value })
                  }}
                >
                  {filterable.map((entry) => (
                    <option key={entry.id} value={entry.id}>
                      {entry.name}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Condition
                <select
                  value={draft.predicate}
                  onChange={(event) => change(index, { predicate: event.target.value })}
                >
                  {field?.predicates.map((entry) => (
                    <option key={entry.value} value={entry.value}>
                      {entry.label}
                    </option>
                  ))}
                </select>
              </label>
              {(predicate?.operand ?? true) && (
                <label>
                  Value
                  <input
                    value={draft.operand}
                    placeholder={hintOf(draft.predicate)}
                    onChange={(event) => change(index, { operand: event.target.value })}
                  />
                </label>
              )}
              <button
                type="button"
                className="link"
                aria-label={`Remove filter ${index + 1}`}
                onClick={() => setDrafts(drafts.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            </fieldset>
          )
        })}
        <div className="row">
          <button type="button" onClick={add} disabled={filterable.length === 0}>
            Add a filter
          </button>
          <label className="inline-label">
            Rows must match
            <select
              value={match}
              onChange={(event) => setMatch(event.target.value as 'all' | 'any')}
            >
              <option value="all">every filter</option>
              <option value="any">any filter</option>
            </select>
          </label>
          <button type="submit" className="primary">
            Apply filters
          </button>
          {props.query.filters.length > 0 && (
            <button
              type="button"
              onClick={() => {
                setDrafts([])
                apply([])
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      </form>
    </section>
  )
}

/** What a value looks like for a condition. */
function hintOf(predicate: string) {
  if (predicate === 'between') return 'from, to'
  if (['any_of', 'none_of', 'all_of'].includes(predicate)) return 'one, two, three'
  if (predicate === 'within') return 'this_week, last_7_days…'
  return ''
}

/** Which columns the grid shows (kept in this browser, per table). */
export function ColumnPicker(props: {
  id: string
  fields: GridField[]
  hidden: Set<number>
  onChange: (hidden: Set<number>) => void
}) {
  const toggle = (id: number, shown: boolean) => {
    const next = new Set(props.hidden)
    if (shown) next.delete(id)
    else next.add(id)
    props.onChange(next)
  }
  return (
    <section id={props.id} className="grid-columns" aria-label="Columns">
      <div className="column-list">
        {props.fields.map((field) => (
          <label className="check" key={field.id}>
            <input
              type="checkbox"
              checked={!props.hidden.has(field.id)}
              onChange={(event) => toggle(field.id, event.target.checked)}
            />
            {field.name}
          </label>
        ))}
      </div>
      {props.hidden.size > 0 && (
        <button type="button" onClick={() => props.onChange(new Set())}>
          Show every column
        </button>
      )}
    </section>
  )
}
