import application from '@adonisjs/core/services/app'
import { randomUUID } from 'node:crypto'
import { UserService } from '#core/services/user_service'
import { rpc, type Form } from './rpc.js'

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

/** The real client flow: createAppkey -> createOauthkey -> createSesskey. */
export async function login(
  user: { code: string; email: string | null },
  options: { restrictions?: unknown; form?: Form; appname?: string } = {}
): Promise<Session> {
  const form = options.form ?? 'urlencoded'
  const app = await rpc({ req: 'createAppkey', appname: options.appname ?? 'quire-tests' }, form)
  const oauth = await rpc(
    {
      req: 'createOauthkey',
      appkey: app.body.appkey,
      login: user.email ?? user.code,
      pwd: TEST_PASSWORD,
    },
    form
  )
  if (oauth.body.status !== 'ok') throw new Error(`login failed: ${oauth.text}`)
  const sess = await rpc(
    {
      req: 'createSesskey',
      o_u: oauth.body.o_u,
      oauthkey: oauth.body.oauthkey,
      restrictions: options.restrictions ?? '',
    },
    form
  )
  if (sess.body.status !== 'ok') throw new Error(`createSesskey failed: ${sess.text}`)
  return {
    o_u: oauth.body.o_u,
    sesskey: sess.body.sesskey,
    oauthkey: oauth.body.oauthkey,
    appkey: app.body.appkey,
  }
}
