import app from '@adonisjs/core/services/app'
import { type Form } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { QuireClient } from '#client/index'
import { login, makeUser, type Session } from '#tests/helpers/users'
import type { Actor } from '#core/rpc/base_operation'
import { resolveActor } from '#core/auth/resolve_actor'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { BookCountersService } from '#plugins/books/services/book_counters_service'
import type User from '#models/user'

const [access, users, counters] = await Promise.all([
  app.container.make(AccessService),
  app.container.make(UserService),
  app.container.make(BookCountersService),
])

/** A user with a live session, and a shortcut to call api.php as them. */
export interface Client {
  user: User
  session: Session
  code: string
  call(params: Record<string, unknown>, form?: Form): Promise<Record<string, any>>
}

export async function client(options: { restrictions?: unknown } = {}): Promise<Client> {
  const user = await makeUser()
  const session = await login(user, { restrictions: options.restrictions })
  return clientFor(user, session)
}

export function clientFor(user: User, session: Session): Client {
  let typed: QuireClient | null = null
  return {
    user,
    session,
    code: user.code,
    // Through the typed client's call() (resources/client), as these tests always sent it:
    // o_u and sesskey, no u_c, no version.
    call({ req, ...params }, form = 'urlencoded') {
      if (!typed) {
        typed = new QuireClient({ baseUrl: serverUrl(), retries: 0, version: null })
        typed.useSession({ o_u: session.o_u, sesskey: session.sesskey })
      }
      return typed.call(req as string, params, { form })
    },
  }
}

/** Another session of the same user, e.g. restricted to one book. */
export async function sessionOf(owner: Client, restrictions: unknown): Promise<Client> {
  const session = await login(owner.user, { restrictions })
  return clientFor(owner.user, session)
}

/**
 * The Actor the services receive for a client's session, resolved as
 * api.php and the socket resolve it (its restrictions are the session's).
 */
export function actorOf(who: Client): Promise<Actor> {
  const { session } = who
  return resolveActor(access, users, { o_u: session.o_u, sesskey: session.sesskey, u_c: '' })
}

let bookCounter = 0

/** A new book owned by `owner`; returns its b_o and b_c. */
export async function book(owner: Client, extra: Record<string, unknown> = {}) {
  bookCounter++
  const code = `book${Date.now().toString(36)}${bookCounter}`
  const answer = await owner.call({ req: 'createBook', b_c: code, ...extra })
  if (answer.status !== 'ok') throw new Error(`createBook failed: ${JSON.stringify(answer)}`)
  return { b_o: owner.code, b_c: code }
}

/**
 * A new owner's book shared with one new member per right given (each has
 * accepted): `const { owner, members: [bob, carol], target } = await sharedBook(2, 3)`.
 */
export async function sharedBook(...rights: number[]) {
  const owner = await client()
  const target = await book(owner)
  const members: Client[] = []
  for (const right of rights) {
    const member = await client()
    await share(owner, target, member, right)
    members.push(member)
  }
  return { owner, members, target }
}

/** `member` joins the book with `right` (invitation sent by the owner, then accepted). */
export async function share(
  owner: Client,
  target: { b_o: string; b_c: string },
  member: Client,
  right = 2
) {
  const invited = await owner.call({ req: 'inviteMember', ...target, member: member.code, right })
  if (invited.status !== 'ok') throw new Error(`inviteMember failed: ${JSON.stringify(invited)}`)
  const accepted = await member.call({ req: 'acceptInvitation', ...target })
  if (accepted.status !== 'ok')
    throw new Error(`acceptInvitation failed: ${JSON.stringify(accepted)}`)
}

export async function send(
  sender: Client,
  target: { b_o: string; b_c: string },
  msg: string,
  extra: Record<string, unknown> = {}
) {
  const answer = await sender.call({ req: 'sendMsg', ...target, msg, ...extra })
  if (answer.status !== 'ok') throw new Error(`sendMsg failed: ${JSON.stringify(answer)}`)
  return answer
}

/** Folds pending counter refreshes (the counted part) so both counter paths get exercised. */
export async function flushCounters() {
  await counters.flush()
}

export function expectNok(assert: any, answer: Record<string, any>, code: string) {
  assert.equal(answer.status, 'nok', JSON.stringify(answer))
  assert.equal(answer.errorCode, code, JSON.stringify(answer))
  assert.isString(answer.errorMsg)
}

/** A field of an answer by path ('book.nbNotRead'), to keep assertions on one line. */
export function pick(answer: unknown, path: string): any {
  return path
    .split('.')
    .reduce(
      (value: any, key) => (value === null || value === undefined ? value : value[key]),
      answer
    )
}
