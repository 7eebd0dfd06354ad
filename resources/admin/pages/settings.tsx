import { Head, router } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import { Card, FieldError, FormErrors } from '../components/ui'

type Value = boolean | number | string

interface Setting {
  key: string
  label: string
  help: string
  type: 'boolean' | 'integer' | 'string' | 'enum'
  min: number | null
  max: number | null
  choices: string[] | null
  /** Null for a secret. */
  value: Value | null
  defaultValue: Value | null
  source: 'env' | 'database' | 'default'
  env: string
  runtime: boolean
  editable: boolean
}

interface Props {
  groups: { owner: string; title: string; settings: Setting[] }[]
}

const LIST = { listStyle: 'none', margin: 0, padding: 0 } as const
const ROW = { borderTop: '1px solid var(--line)', padding: '0.8rem 0' } as const

/** A value in plain words. */
function shown(setting: Setting, value: Value | null) {
  if (value === null) return 'hidden (secret)'
  if (setting.type === 'boolean') return value ? 'On' : 'Off'
  if (setting.type === 'integer') return Number(value).toLocaleString('en')
  return String(value)
}

/** Where the value comes from, in plain words. */
function sourceOf(setting: Setting) {
  if (setting.source === 'env') return `Set by the environment variable ${setting.env}`
  if (setting.source === 'database') return 'Changed here'
  return 'Default'
}

/** One setting: its value and source, and a form when it may change here. */
function SettingRow({ setting }: { setting: Setting }) {
  const [value, setValue] = useState(String(setting.value ?? ''))
  const [saving, setSaving] = useState(false)
  const send = (data: Record<string, string | boolean>) =>
    router.post(`/admin/settings/${setting.key}`, data, {
      preserveScroll: true,
      onStart: () => setSaving(true),
      onFinish: () => setSaving(false),
    })
  const save = (event: FormEvent) => {
    event.preventDefault()
    send({ value })
  }
  let input
  if (setting.type === 'boolean' || setting.type === 'enum') {
    const options =
      setting.type === 'boolean'
        ? [
            { value: 'true', label: 'On' },
            { value: 'false', label: 'Off' },
          ]
        : setting.choices!.map((choice) => ({ value: choice, label: choice }))
    input = (
      <select name="value" value={value} onChange={(event) => setValue(event.target.value)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    )
  } else {
    input = (
      <input
        name="value"
        type={setting.type === 'integer' ? 'number' : 'text'}
        inputMode={setting.type === 'integer' ? 'numeric' : undefined}
        value={value}
        onChange={(event) => setValue(event.target.value)}
      />
    )
  }
  const bounds =
    setting.type === 'integer' && (setting.min !== null || setting.max !== null)
      ? `From ${setting.min?.toLocaleString('en') ?? 'any'} to ${setting.max?.toLocaleString('en') ?? 'any'}. `
      : ''
  return (
    <li style={ROW} data-setting={setting.key} data-source={setting.source}>
      <div>
        <strong>{setting.label}</strong>
        <p className="muted small">{setting.help}</p>
        <p className="small">
          <span data-value>{shown(setting, setting.value)}</span> ·{' '}
          <span data-source-text>{sourceOf(setting)}</span>
          {setting.source !== 'default' && <> · default {shown(setting, setting.defaultValue)}</>}
        </p>
      </div>
      {setting.editable ? (
        <>
          <form className="inline" onSubmit={save}>
            <label>
              New value
              {input}
            </label>
            <button type="submit" className="primary" disabled={saving}>
              Save
            </button>
            {setting.source === 'database' && (
              <button type="button" disabled={saving} onClick={() => send({ reset: true })}>
                Back to default
              </button>
            )}
          </form>
          <FieldError name={setting.key} />
          <p className="muted small">{bounds}Applies at once on every running instance.</p>
        </>
      ) : (
        <p className="muted small" data-read-only>
          {setting.source === 'env'
            ? `Read-only here: change ${setting.env} and restart Quire.`
            : `Applies at start only: set the environment variable ${setting.env} and restart Quire.`}
        </p>
      )}
    </li>
  )
}

/** Every declared setting, grouped by the part of Quire that declares it. */
export default function SettingsPage({ groups }: Props) {
  return (
    <>
      <Head title="Settings" />
      <h1>Settings</h1>
      <p className="muted">
        Quire and each plugin declare their settings. A value set by an environment variable is
        fixed while Quire runs; the others can change here and apply without a restart.
      </p>
      <FormErrors />
      {groups.map((group) => (
        <div key={group.owner} data-group={group.owner}>
          <Card title={group.title}>
            <ul style={LIST}>
              {group.settings.map((setting) => (
                // Keyed by value too: after a save or a reset the field shows the new value.
                <SettingRow
                  key={`${setting.key}:${String(setting.value)}:${setting.source}`}
                  setting={setting}
                />
              ))}
            </ul>
          </Card>
        </div>
      ))}
    </>
  )
}
