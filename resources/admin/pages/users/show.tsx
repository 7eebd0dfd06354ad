import { Head, Link, router, useForm } from '@inertiajs/react'
import { useState, type FormEvent } from 'react'
import {
  Card,
  ConfirmButton,
  FieldError,
  FormErrors,
  Pager,
  SearchBox,
  formatDate,
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
  delegations: Paged<{ userId: number; userCode: string; delegateId: number; delegateCode: string }>
  sesskeys: Paged<{
    id: number
    appName: string | null
    createdAt: string | null
    lastUsedAt: string | null
    expiresAt: string | null
  }>
  authSessions: Paged<{
    id: string
    client_id: string | null
    ip: string | null
    user_agent: string | null
    created_at: string
    last_refreshed_at: string | null
  }>
}

/** A list paged and searched on the server (`<list>Page`, `<list>Search`). */
interface Paged<T> {
  items: T[]
  total: number
  page: number
  perPage: number
  search: string
}

/** One user: profile, password, account state, two-factor, delegations and sessions. */
export default function UserShow({ user, twoFactor, delegations, sesskeys, authSessions }: Props) {
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
          A delegate may act on behalf of a user (o_u = delegate, u_c = user), as `node ace
          user:delegate` grants.
        </p>
        <SearchBox
          name="delegations"
          only={['delegations']}
          value={delegations.search}
          placeholder="User code"
        />
        <ul>
          {delegations.items.map((item) => (
            <li key={`${item.userId}-${item.delegateId}`}>
              <strong>{item.delegateCode}</strong> acts for <strong>{item.userCode}</strong>{' '}
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
            </li>
          ))}
          {delegations.items.length === 0 && <li className="muted">None</li>}
        </ul>
        <Pager {...delegations} name="delegations" only={['delegations']} />
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
      <div className="grid2">
        <Card title={`Sesskeys (${sesskeys.total})`}>
          <SearchBox
            name="sesskeys"
            only={['sesskeys']}
            value={sesskeys.search}
            placeholder="Application or id"
          />
          <ul>
            {sesskeys.items.map((session) => (
              <li key={session.id}>
                #{session.id} {session.appName ?? 'no app'} · created{' '}
                {formatDate(session.createdAt)} · used {formatDate(session.lastUsedAt)}{' '}
                <ConfirmButton
                  label="Revoke"
                  question="Drop this sesskey?"
                  danger
                  onConfirm={() =>
                    post('/sessions/revoke', { kind: 'sesskey', id: String(session.id) })
                  }
                />
              </li>
            ))}
            {sesskeys.items.length === 0 && <li className="muted">None</li>}
          </ul>
          <Pager {...sesskeys} name="sesskeys" only={['sesskeys']} />
        </Card>
        <Card title={`Auth-service sessions (${authSessions.total})`}>
          <SearchBox
            name="authSessions"
            only={['authSessions']}
            value={authSessions.search}
            placeholder="Client, address or browser"
          />
          <ul>
            {authSessions.items.map((session) => (
              <li key={session.id}>
                {session.client_id ?? 'direct'} · {session.ip ?? '?'} ·{' '}
                {formatDate(session.created_at)}{' '}
                <ConfirmButton
                  label="Revoke"
                  question="End this session?"
                  danger
                  onConfirm={() => post('/sessions/revoke', { kind: 'auth', id: session.id })}
                />
              </li>
            ))}
            {authSessions.items.length === 0 && <li className="muted">None</li>}
          </ul>
          <Pager {...authSessions} name="authSessions" only={['authSessions']} />
        </Card>
      </div>
    </>
  )
}
