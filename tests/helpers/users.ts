import application from '@adonisjs/core/services/app'
import { randomUUID } from 'node:crypto'
import { UserService } from '#core/services/user_service'
import { QuireClient, QuireError } from '#client/index'
import type { Form } from './rpc.js'
import { serverUrl } from './server.js'

const users = await application.container.make(UserService)

export const TEST_PASSWORD = 'correct horse battery'

let counter = 0

/** A new user with unique code, e-mail and phone. */
export async function makeUser(overrides: { isAdmin?: boolean; password?: string } = {}) {
  counter++
  const tag = `${Date.now().toString(36)}${counter}${randomUUID().slice(0, 4)}`
  const user = await users.create({
    code: `u${tag}`,
    email: `user.${tag}@example.test`,
    phone: `+3361${String(Date.now() % 1e7).padStart(7, '0')}${counter}`.slice(0, 16),
    password: overrides.password ?? TEST_PASSWORD,
    firstName: 'Test',
    lastName: `User ${counter}`,
    isAdmin: overrides.isAdmin ?? false,
  })
  return user
}

export interface Session {
  o_u: string
  sesskey: string
  oauthkey: string
  appkey: string
}

/**
 * The real client flow, through the typed client's key flow (resources/client
 * login()): createAppkey -> createOauthkey -> createSesskey.
 */
export async function login(
  user: { code: string; email: string | null },
  options: { restrictions?: unknown; form?: Form; appname?: string } = {}
): Promise<Session> {
  const client = new QuireClient({
    baseUrl: serverUrl(),
    retries: 0,
    version: null,
    form: options.form ?? 'urlencoded',
  })
  try {
    const keys = await client.login({
      appname: options.appname ?? 'quire-tests',
      login: user.email ?? user.code,
      password: TEST_PASSWORD,
      restrictions: options.restrictions ?? '',
    })
    return { o_u: keys.o_u, sesskey: keys.sesskey!, oauthkey: keys.oauthkey!, appkey: keys.appkey! }
  } catch (error) {
    if (!(error instanceof QuireError)) throw error
    const step = error.req === 'createSesskey' ? 'createSesskey failed' : 'login failed'
    throw new Error(`${step}: ${JSON.stringify(error.answer)}`)
  }
}
