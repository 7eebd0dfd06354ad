import { router } from '@inertiajs/react'
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import type { GridField } from './types'

interface Props {
  tableId: number
  rowId: number
  rowNumber: number
  field: GridField
  text: string
}

/**
 * A cell the administrator may change: a button showing the value (Enter or a click opens the
 * editor), the field's editor (Enter or leaving it saves, Escape cancels), a checkbox saved
 * as soon as it changes. Saving posts the cell to the server (updateTableValue's service) and
 * the page's rows come back from it; a refusal comes back as the page's error.
 */
export function EditableCell({ tableId, rowId, rowNumber, field, text }: Props) {
  const [editing, setEditing] = useState(false)
  const [draft, setDraft] = useState(text)
  const [saving, setSaving] = useState(false)
  const opener = useRef<HTMLButtonElement>(null)
  const label = `${field.name}, row ${rowNumber}`

  useEffect(() => {
    if (!editing) setDraft(text)
  }, [text, editing])

  // Back to the cell's button once its editor is gone: after the commit that mounts the button
  // (a frame requested when the save finished ran before React rendered, with no button yet,
  // and the focus fell to the page), unless the focus has moved on (another cell's editor).
  const returnFocus = useRef(false)
  useEffect(() => {
    if (editing || !returnFocus.current) return
    returnFocus.current = false
    const active = document.activeElement
    if (!active || active === document.body) opener.current?.focus()
  }, [editing])

  const save = (value: string) => {
    setSaving(true)
    router.post(
      `/admin/tables/${tableId}/cells`,
      { rowId: String(rowId), fieldId: field.id, value },
      {
        preserveScroll: true,
        preserveState: true,
        onFinish: () => {
          setSaving(false)
          setEditing(false)
          // A checkbox is never an editor: it keeps the focus itself.
          returnFocus.current = field.editor !== 'checkbox'
        },
      }
    )
  }
  const finish = () => (draft === text ? close() : save(draft))
  const close = () => {
    setEditing(false)
    setDraft(text)
    returnFocus.current = true
  }
  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault()
      close()
    } else if (event.key === 'Enter' && (field.editor !== 'longtext' || event.ctrlKey)) {
      event.preventDefault()
      finish()
    }
  }

  if (field.editor === 'checkbox')
    return (
      <input
        type="checkbox"
        className="cell-check"
        aria-label={label}
        checked={text === 'yes'}
        disabled={saving}
        onChange={(event) => save(event.target.checked ? 'true' : 'false')}
      />
    )

  if (!editing)
    return (
      <button
        ref={opener}
        type="button"
        className="cell-button"
        aria-label={`Edit ${label}: ${text || 'empty'}`}
        title={text}
        onClick={() => setEditing(true)}
      >
        {text || <span className="cell-empty">—</span>}
      </button>
    )

  const common = {
    'aria-label': label,
    'autoFocus': true,
    'disabled': saving,
    'onKeyDown': onKey,
    'onBlur': () => !saving && finish(),
    'className': 'cell-input',
  }
  if (field.editor === 'choice')
    return (
      <select {...common} value={draft} onChange={(event) => setDraft(event.target.value)}>
        <option value="">(empty)</option>
        {[...new Set([...field.choices, ...(draft ? [draft] : [])])].map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    )
  if (field.editor === 'longtext')
    return (
      <textarea
        {...common}
        rows={3}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
      />
    )
  return (
    <input
      {...common}
      type="text"
      inputMode={field.editor === 'number' ? 'decimal' : undefined}
      placeholder={field.editor === 'date' ? 'YYYY-MM-DD' : undefined}
      value={draft}
      onChange={(event) => setDraft(event.target.value)}
    />
  )
}
