import { Head, router, useForm } from '@inertiajs/react'
import {
  Card,
  ConfirmButton,
  counted,
  FieldError,
  FormErrors,
  ServerList,
  formatDate,
} from '../components/ui'
import type { PagedList } from '../components/ui'

interface OauthkeyRow {
  id: number
  appName: string | null
  createdAt: string | null
  lastUsedAt: string | null
}

interface Props {
  me: { code: string }
  twoFactor: { enrolled: boolean; required: boolean; recoveryCodesLeft: number }
  enrolment: { secret: string; uri: string; qr: string } | null
  recoveryCodes: string[] | null
  apiPasswordDisabled: boolean
  oauthkeys: PagedList<OauthkeyRow>
  newOauthkey: { id: number; oauthkey: string; o_u: string; application: string } | null
}

const post = (path: string, data: Record<string, any> = {}) =>
  router.post(`/admin/account${path}`, data, { preserveScroll: true })

/** The signed-in administrator's own security: TOTP, recovery codes, api.php password sign-in, personal oauthkeys. */
export default function Account(props: Props) {
  const { twoFactor, enrolment, recoveryCodes, newOauthkey } = props
  const code = useForm({ code: '' })
  const key = useForm({ application: '' })
  return (
    <>
      <Head title="Your account" />
      <h1>Your account ({props.me.code})</h1>
      <FormErrors />
      {recoveryCodes && (
        <Card title="Your recovery codes">
          <p>
            Keep these ten codes somewhere safe: each one signs you in once in place of an
            authenticator code. They are shown only now.
          </p>
          <ol className="codes" data-testid="recovery-codes">
            {recoveryCodes.map((entry) => (
              <li key={entry}>
                <code>{entry}</code>
              </li>
            ))}
          </ol>
        </Card>
      )}
      <div className="grid2">
        <Card title="Two-factor authentication">
          {twoFactor.enrolled ? (
            <>
              <p data-testid="totp-state">
                Set up. {counted(twoFactor.recoveryCodesLeft, 'recovery code')} left.
              </p>
              <ConfirmButton
                label="New recovery codes"
                question="Make ten new codes? The old ones stop working."
                onConfirm={() => post('/recovery-codes')}
              />
              <FieldError name="recovery" />
            </>
          ) : enrolment ? (
            <form
              className="enrol"
              onSubmit={(event) => {
                event.preventDefault()
                code.post('/admin/account/totp/confirm', { onFinish: () => code.reset() })
              }}
            >
              <p>Scan this code with your authenticator app, then enter the code it shows.</p>
              <img
                src={enrolment.qr}
                alt="QR code of the authenticator key"
                width={200}
                height={200}
              />
              <p className="muted small">
                Or type the key: <code data-testid="totp-secret">{enrolment.secret}</code>
              </p>
              <label>
                6-digit code
                <input
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="\d{6}"
                  maxLength={6}
                  value={code.data.code}
                  onChange={(event) => code.setData('code', event.target.value)}
                  required
                />
                <FieldError name="code" />
              </label>
              <button type="submit" className="primary" disabled={code.processing}>
                Confirm
              </button>
            </form>
          ) : (
            <>
              <p data-testid="totp-state">
                Not set up
                {twoFactor.required ? ' (required: you will enrol at your next sign-in)' : ''}.
              </p>
              <button type="button" className="primary" onClick={() => post('/totp')}>
                Set up two-factor authentication
              </button>
              <FieldError name="totp" />
            </>
          )}
        </Card>
        <Card title="Password sign-in for applications">
          <p data-testid="api-password">
            Applications signing in with your password:{' '}
            <strong>{props.apiPasswordDisabled ? 'off' : 'on'}</strong>.{' '}
            {props.apiPasswordDisabled
              ? 'Applications use an application key made below.'
              : 'Turn it off to let in only application keys made here (needs two-factor authentication).'}
          </p>
          {props.apiPasswordDisabled ? (
            <button type="button" onClick={() => post('/api-password', { disabled: false })}>
              Turn password sign-in on
            </button>
          ) : (
            <ConfirmButton
              label="Turn password sign-in off"
              question="Applications will no longer sign in with your password. Continue?"
              onConfirm={() => post('/api-password', { disabled: true })}
            />
          )}
          <FieldError name="apiPassword" />
        </Card>
      </div>
      <Card title="Your application keys">
        <p className="muted small">
          An application key lets an application open API sessions as you, without your password. It
          is shown once; revoking it ends its sessions.
        </p>
        {newOauthkey && (
          <p className="notice" data-testid="new-oauthkey">
            New application key for {newOauthkey.application} (it signs in as{' '}
            <code>{newOauthkey.o_u}</code>): <code>{newOauthkey.oauthkey}</code> — copy it now, it
            is not shown again.
          </p>
        )}
        <form
          className="inline"
          aria-label="New application key"
          onSubmit={(event) => {
            event.preventDefault()
            key.post('/admin/account/oauthkeys', {
              preserveScroll: true,
              onSuccess: () => key.reset(),
            })
          }}
        >
          <label>
            Application name
            <input
              name="application"
              value={key.data.application}
              onChange={(event) => key.setData('application', event.target.value)}
              required
            />
            <FieldError name="application" />
          </label>
          <button type="submit">Create an application key</button>
        </form>
        <ServerList
          list={props.oauthkeys}
          name="oauthkeys"
          placeholder="Search by application"
          empty="No application key"
          columns={[
            { header: 'Application', cell: (row) => row.appName ?? '—' },
            { header: 'Created', cell: (row) => formatDate(row.createdAt) },
            { header: 'Last used', cell: (row) => formatDate(row.lastUsedAt) },
            {
              header: '',
              cell: (row) => (
                <ConfirmButton
                  label="Revoke"
                  question="Revoke this application key and its sessions?"
                  danger
                  onConfirm={() => post(`/oauthkeys/${row.id}/revoke`)}
                />
              ),
            },
          ]}
          rowKey={(row) => row.id}
          rowData={(row) => ({ 'data-oauthkey': row.id })}
        />
      </Card>
    </>
  )
}
