import { Head, Link, router, useForm } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import {
  Card,
  ConfirmButton,
  FieldError,
  FormErrors,
  ServerList,
  formatDate,
  type Column,
  type PagedList,
} from '../../components/ui'

interface Props {
  user: {
    id: number
    code: string
    email: string | null
    phone: string | null
    firstName: string
    lastName: string
    isAdmin: boolean
    disabled: boolean
    lastConnectionAt: string | null
    createdAt: string | null
  }
  twoFactor: { enrolled: boolean; policy: 'required' | 'optional' | null; required: boolean }
  delegations: PagedList<{
    userId: number
    userCode: string
    delegateId: number
    delegateCode: string
  }>
  sesskeys: PagedList<{
    id: number
    appName: string | null
    createdAt: string | null
    lastUsedAt: string | null
    expiresAt: string | null
  }>
  /** Panels contributed by plugins (manifest admin.userPanels); each one's rows are the prop named by its key. */
  panels: Panel[]
  [panelRows: string]: unknown
}

interface Panel {
  key: string
  pluginId: string
  title: string
  description?: string
  columns: { key: string; label: string; format?: 'text' | 'date' }[]
  searchPlaceholder?: string
  rowAction?: { action: string; label: string; question: string }
}

type PanelRow = { id: string; cells: Record<string, string | number | null> }

/** One user: profile, password, account state, two-factor, delegations and sessions. */
export default function UserShow(props: Props) {
  const { user, twoFactor, delegations, sesskeys, panels } = props
  const base = `/admin/users/${user.id}`
  const profile = useForm({
    email: user.email ?? '',
    phone: user.phone ?? '',
    firstName: user.firstName,
    lastName: user.lastName,
    isAdmin: user.isAdmin,
  })
  const password = useForm({ password: '' })
  const [delegate, setDelegate] = useState('')
  const post = (path: string, data: Record<string, any>) =>
    router.post(`${base}${path}`, data, { preserveScroll: true })
  /** The last column of a session list: revoke that session, once confirmed. */
  const revokeColumn = <Row,>(
    question: string,
    session: (row: Row) => { kind: 'sesskey'; id: string }
  ): Column<Row> => ({
    cell: (row) => (
      <ConfirmButton
        label="Revoke"
        question={question}
        danger
        onConfirm={() => post('/sessions/revoke', session(row))}
      />
    ),
  })

  /** A plugin's panel: its columns, and its row action posted back to the panel's part. */
  const panelCard = (panel: Panel) => {
    const list = props[panel.key] as PagedList<PanelRow>
    const columns: Column<PanelRow>[] = panel.columns.map((column) => ({
      header: column.label,
      cell: (row) =>
        column.format === 'date'
          ? formatDate(row.cells[column.key] as string | null)
          : String(row.cells[column.key] ?? ''),
    }))
    const action = panel.rowAction
    if (action)
      columns.push({
        cell: (row) => (
          <ConfirmButton
            label={action.label}
            question={action.question}
            danger
            onConfirm={() => post(`/panels/${panel.key}/${action.action}`, { id: row.id })}
          />
        ),
      })
    return (
      <div key={panel.key} data-panel={panel.key}>
        <Card title={`${panel.title} (${list.total})`}>
          {panel.description && <p className="muted small">{panel.description}</p>}
          <ServerList
            list={list}
            name={panel.key}
            placeholder={panel.searchPlaceholder}
            rowKey={(row) => row.id}
            columns={columns}
          />
        </Card>
      </div>
    )
  }

  const saveProfile = (event: FormEvent) => {
    event.preventDefault()
    profile.transform((data) =>
      Object.fromEntries(Object.entries(data).filter(([, value]) => value !== ''))
    )
    profile.post(base, { preserveScroll: true })
  }
  const field = (name: 'email' | 'phone' | 'firstName' | 'lastName', label: string) => (
    <label>
      {label}
      <input
        name={name}
        value={profile.data[name]}
        onChange={(event) => profile.setData(name, event.target.value)}
      />
      <FieldError name={name} />
    </label>
  )
  return (
    <>
      <Head title={user.code} />
      <p className="muted">
        <Link href="/admin/users">Users</Link> ›
      </p>
      <h1>
        {user.code} {user.isAdmin && <span className="tag">admin</span>}{' '}
        {user.disabled && <span className="tag bad">disabled</span>}
      </h1>
      <FormErrors />
      <div className="grid2">
        <Card title="Profile">
          <form onSubmit={saveProfile} className="form-grid">
            {field('email', 'E-mail')}
            {field('phone', 'Phone')}
            {field('firstName', 'First name')}
            {field('lastName', 'Last name')}
            <label className="check">
              <input
                type="checkbox"
                checked={profile.data.isAdmin}
                onChange={(event) => profile.setData('isAdmin', event.target.checked)}
              />
              Administrator
            </label>
            <button type="submit" className="primary">
              Save
            </button>
          </form>
          <p className="muted small">
            Created {formatDate(user.createdAt)} · last connection{' '}
            {formatDate(user.lastConnectionAt)}
          </p>
        </Card>
        <Card title="Account">
          <form
            className="inline"
            onSubmit={(event) => {
              event.preventDefault()
              password.post(`${base}/password`, {
                preserveScroll: true,
                onSuccess: () => password.reset(),
              })
            }}
          >
            <label>
              New password
              <input
                type="password"
                name="password"
                value={password.data.password}
                onChange={(event) => password.setData('password', event.target.value)}
                required
              />
              <FieldError name="password" />
            </label>
            <button type="submit">Reset password</button>
          </form>
          <div className="row">
            {user.disabled ? (
              <button type="button" onClick={() => post('/disable', { disabled: false })}>
                Enable account
              </button>
            ) : (
              <ConfirmButton
                label="Disable account"
                question={`Disable ${user.code}? Every session of this user ends.`}
                danger
                onConfirm={() => post('/disable', { disabled: true })}
              />
            )}
          </div>
          <h3>Two-factor authentication</h3>
          <p>
            {twoFactor.enrolled ? 'Enrolled' : 'Not enrolled'} · policy{' '}
            {twoFactor.policy ?? 'global default'} ({twoFactor.required ? 'required' : 'optional'})
          </p>
          <div className="row">
            <button type="button" onClick={() => post('/two-factor', { action: 'require' })}>
              Require
            </button>
            <button type="button" onClick={() => post('/two-factor', { action: 'optional' })}>
              Make optional
            </button>
            <button type="button" onClick={() => post('/two-factor', { action: 'default' })}>
              Use global policy
            </button>
            {twoFactor.enrolled && (
              <ConfirmButton
                label="Reset two-factor"
                question="Forget this user's authenticator?"
                danger
                onConfirm={() => post('/two-factor', { action: 'reset' })}
              />
            )}
          </div>
        </Card>
      </div>
      <Card title="Delegations">
        <p className="muted small">
          A delegate signs in as itself and may then act on behalf of the user it was granted (an
          assistant, a bot).
        </p>
        <ServerList
          list={delegations}
          name="delegations"
          placeholder="User code"
          rowKey={(item) => `${item.userId}-${item.delegateId}`}
          columns={[
            { header: 'Delegate', cell: (item) => <strong>{item.delegateCode}</strong> },
            { header: 'Acts on behalf of', cell: (item) => <strong>{item.userCode}</strong> },
            {
              cell: (item) => (
                <ConfirmButton
                  label="Revoke"
                  question="Revoke this delegation?"
                  onConfirm={() =>
                    post(
                      '/delegations',
                      item.userId === user.id
                        ? { delegate: item.delegateCode, action: 'revoke' }
                        : { delegate: item.userCode, action: 'revoke', direction: 'user' }
                    )
                  }
                />
              ),
            },
          ]}
        />
        <form
          className="inline"
          onSubmit={(event) => {
            event.preventDefault()
            post('/delegations', { delegate, action: 'grant' })
            setDelegate('')
          }}
        >
          <label>
            Let this user act for {user.code}
            <input
              name="delegate"
              value={delegate}
              placeholder="code, e-mail or phone"
              onChange={(event) => setDelegate(event.target.value)}
              required
            />
            <FieldError name="delegate" />
          </label>
          <button type="submit">Grant</button>
        </form>
      </Card>
      <Card title={`API sessions (${sesskeys.total})`}>
        <ServerList
          list={sesskeys}
          name="sesskeys"
          placeholder="Application or id"
          rowKey={(session) => session.id}
          columns={[
            { header: 'Id', cell: (session) => `#${session.id}` },
            { header: 'Application', cell: (session) => session.appName ?? 'no app' },
            { header: 'Created', cell: (session) => formatDate(session.createdAt) },
            { header: 'Used', cell: (session) => formatDate(session.lastUsedAt) },
            revokeColumn('End this API session?', (session: { id: number }) => ({
              kind: 'sesskey',
              id: String(session.id),
            })),
          ]}
        />
      </Card>
      {panels.map(panelCard)}
    </>
  )
}
