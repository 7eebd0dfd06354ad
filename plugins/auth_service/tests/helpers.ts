import { generate } from 'otplib'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { CredentialService } from '#core/services/credential_service'
import authConfig from '#plugins/auth_service/config'
import { Clock } from '#plugins/auth_service/services/clock'
import { AuthUserService } from '#plugins/auth_service/services/auth_user_service'
import { AuthorizationService } from '#plugins/auth_service/services/authorization_service'
import { TotpService } from '#plugins/auth_service/services/totp_service'

export { TEST_PASSWORD, authConfig }

/** The running application's services (container singletons), for setting up and inspecting. */
export const clock = await app.container.make(Clock)
export const credentials = await app.container.make(CredentialService)
export const authUsers = await app.container.make(AuthUserService)
export const totp = await app.container.make(TotpService)
const authorizations = await app.container.make(AuthorizationService)

export interface Answer {
  status: number
  body: Record<string, any>
  headers: Headers
  text: string
}

/** A real HTTP call to {auth_url}: JSON body by default, urlencoded with `form`. */
export async function call(
  method: string,
  path: string,
  options: {
    json?: unknown
    form?: Record<string, string>
    token?: string
    raw?: string
    headers?: Record<string, string>
  } = {}
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | undefined
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json'
    body = JSON.stringify(options.json)
  } else if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded'
    body = new URLSearchParams(options.form).toString()
  } else if (options.raw !== undefined) {
    headers['Content-Type'] ??= 'application/json'
    body = options.raw
  }
  if (options.token) headers.Authorization = `Bearer ${options.token}`
  const response = await fetch(`${serverUrl()}${authConfig.prefix}${path}`, {
    method,
    headers,
    body,
  })
  const text = await response.text()
  let parsed: Record<string, any>
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = { unparsable: text.slice(0, 200) }
  }
  return { status: response.status, body: parsed, headers: response.headers, text }
}

export const post = (path: string, json?: unknown, token?: string) =>
  call('POST', path, { json: json ?? {}, token })

/** A kernel user, optionally with an enforced TOTP or a forced password change. */
export async function authUser(
  options: { totp?: 'required' | 'optional'; mustChangePassword?: boolean } = {}
) {
  const user = await makeUser()
  if (options.totp) await authUsers.setPolicy(user, options.totp)
  if (options.mustChangePassword) await authUsers.setMustChangePassword(user, true)
  return user
}

/** A password login that completes (no second factor): the 4.B.2 body. */
export async function signIn(
  user: { email: string | null; code: string },
  extra: Record<string, unknown> = {}
) {
  const answer = await post('/login', {
    login: user.email ?? user.code,
    password: TEST_PASSWORD,
    ...extra,
  })
  if (answer.status !== 200 || !answer.body.jwt) throw new Error(`login failed: ${answer.text}`)
  return answer.body
}

/** The TOTP code of a secret at the auth service's clock (plus an offset in seconds). */
export function codeFor(secret: string, offsetSeconds = 0) {
  return generate({ secret, epoch: clock.nowSeconds() + offsetSeconds })
}

/** Moves the auth clock to the start of the next 30 s TOTP step (a fresh, unused code). */
export function nextStep() {
  const now = clock.nowSeconds()
  clock.advance((30 - (now % 30)) * 1000 + 10)
}

/** Enrols a user through the real enforced-setup flow; answers the secret and the completed body. */
export async function enrol(user: { email: string | null; code: string; id: number }) {
  await authUsers.setPolicy(user, 'required')
  const started = await post('/login', { login: user.email, password: TEST_PASSWORD })
  const secret = started.body.twoFactorData.secret as string
  const done = await post('/login/2fa/setup/confirm', {
    setup_token: started.body.setup_token,
    code: await codeFor(secret),
  })
  if (done.status !== 200) throw new Error(`enrolment failed: ${done.text}`)
  return { secret, body: done.body }
}

export function decodeJwt(jwt: string) {
  const [header, payload] = jwt
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
  return { header, payload }
}

/** Deletes a kernel user the way an admin would (rows of the auth tables with foreign keys go with it). */
export async function deleteUser(userId: number) {
  await db.from('users').where('id', userId).delete()
}

export async function registerClient(clientId: string, redirectUris: string[]) {
  await authorizations.registerClient({ clientId, name: `Client ${clientId}`, redirectUris })
}

/** Every test starts on the real time, with no failed sign-ins counted for the loopback address. */
export async function resetAuthState() {
  clock.reset()
  await credentials.reset({ ip: '127.0.0.1' })
}
