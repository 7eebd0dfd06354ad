import { Head, router, useForm } from '@inertiajs/react'
import type { FormEvent } from 'react'

interface Props {
  step: 'password' | 'totp' | 'setup'
  login: string | null
  setup: { secret: string; uri: string } | null
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
    <div className="signin">
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
                Two-factor authentication is required for <strong>{login}</strong>. Add this key to
                your authenticator app, then enter the code it shows.
              </p>
              <code className="secret" data-testid="totp-secret">
                {setup.secret}
              </code>
              <p className="muted small">
                <a href={setup.uri}>Open in an authenticator app</a>
              </p>
            </div>
          )}
          {step === 'totp' && <p>Enter the code of your authenticator app for {login}.</p>}
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
    </div>
  )
}
