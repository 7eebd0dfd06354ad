import { Head, router, useForm } from '@inertiajs/react'
import type { FormEvent } from 'react'

/** The input's patterns (HTML pattern syntax): 6 digits, or at sign-in a recovery code too. */
const SIX_DIGITS = String.raw`\d{6}`
const SIGN_IN_CODE = String.raw`\d{6}|[A-Za-z2-9]{5}[\s\-]?[A-Za-z2-9]{5}`

interface Props {
  step: 'password' | 'totp' | 'setup'
  login: string | null
  setup: { secret: string; uri: string; qr: string } | null
  error: string | null
}

/** Sign-in: password, then the TOTP code (or its enrolment when the policy requires it). */
export default function Login({ step, login, setup, error }: Props) {
  const password = useForm({ login: login ?? '', password: '' })
  const code = useForm({ code: '' })
  const submitPassword = (event: FormEvent) => {
    event.preventDefault()
    password.post('/admin/login', { onFinish: () => password.reset('password') })
  }
  const submitCode = (event: FormEvent) => {
    event.preventDefault()
    code.post('/admin/login/code', { onFinish: () => code.reset() })
  }
  return (
    <main className="signin">
      <Head title="Sign in" />
      <h1>Quire console</h1>
      {error && (
        <p className="error-box" role="alert">
          {error}
        </p>
      )}
      {step === 'password' ? (
        <form onSubmit={submitPassword}>
          <label>
            Login (user code, e-mail or phone)
            <input
              name="login"
              autoComplete="username"
              value={password.data.login}
              onChange={(event) => password.setData('login', event.target.value)}
              required
            />
          </label>
          <label>
            Password
            <input
              name="password"
              type="password"
              autoComplete="current-password"
              value={password.data.password}
              onChange={(event) => password.setData('password', event.target.value)}
              required
            />
          </label>
          <button type="submit" className="primary" disabled={password.processing}>
            Sign in
          </button>
        </form>
      ) : (
        <form onSubmit={submitCode}>
          {step === 'setup' && setup && (
            <div className="enrol">
              <p>
                Two-factor authentication is required for <strong>{login}</strong>. Scan this code
                with your authenticator app (or type the key below), then enter the code it shows.
              </p>
              <img
                className="qr"
                src={setup.qr}
                alt="QR code of the authenticator key"
                width={200}
                height={200}
                data-testid="totp-qr"
              />
              <code className="secret" data-testid="totp-secret">
                {setup.secret}
              </code>
              <p className="muted small">
                <a href={setup.uri}>Open in an authenticator app</a>
              </p>
            </div>
          )}
          {step === 'totp' && (
            <p>
              Enter the code of your authenticator app for {login}, or one of your recovery codes.
            </p>
          )}
          <label>
            {step === 'totp' ? 'Code (6 digits, or a recovery code)' : '6-digit code'}
            <input
              name="code"
              inputMode={step === 'totp' ? 'text' : 'numeric'}
              autoComplete="one-time-code"
              pattern={step === 'totp' ? SIGN_IN_CODE : SIX_DIGITS}
              maxLength={step === 'totp' ? 11 : 6}
              value={code.data.code}
              onChange={(event) => code.setData('code', event.target.value)}
              autoFocus
              required
            />
          </label>
          <button type="submit" className="primary" disabled={code.processing}>
            Verify
          </button>
          <button type="button" className="link" onClick={() => router.post('/admin/logout')}>
            Start again
          </button>
        </form>
      )}
    </main>
  )
}
