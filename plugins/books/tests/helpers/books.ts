import { rpc, type Form } from '#tests/helpers/rpc'
import { login, makeUser, type Session } from '#tests/helpers/users'
import counters from '#plugins/books/services/counters'
import type User from '#models/user'

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
  return {
    user,
    session,
    code: user.code,
    async call(params, form = 'urlencoded') {
      const answer = await rpc({ o_u: session.o_u, sesskey: session.sesskey, ...params }, form)
      return answer.body
    },
  }
}

/** Another session of the same user, e.g. restricted to one book. */
export async function sessionOf(owner: Client, restrictions: unknown): Promise<Client> {
  const session = await login(owner.user, { restrictions })
  return clientFor(owner.user, session)
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
