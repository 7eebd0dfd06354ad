import { rpc } from '#tests/helpers/rpc'
import { login, makeUser, type Session } from '#tests/helpers/users'
import type User from '#models/user'

/** A user with a live session and a shortcut to call api.php as them. */
export interface Member {
  user: User
  session: Session
  code: string
  call(params: Record<string, unknown>): Promise<Record<string, any>>
}

export function memberOf(user: User, session: Session): Member {
  return {
    user,
    session,
    code: user.code,
    async call(params) {
      const answer = await rpc({
        o_u: session.o_u,
        u_c: session.o_u,
        sesskey: session.sesskey,
        ...params,
      })
      return answer.body
    },
  }
}

export async function member(options: { restrictions?: unknown } = {}): Promise<Member> {
  const user = await makeUser()
  return memberOf(user, await login(user, { restrictions: options.restrictions }))
}

let books = 0

/** A book owned by `owner`, shared with `others` (right 2 by default), invitations accepted. */
export async function sharedBook(owner: Member, others: Member[] = [], right = 2) {
  books++
  const target = { b_o: owner.code, b_c: `sock${Date.now().toString(36)}${books}` }
  const created = await owner.call({ req: 'createBook', b_c: target.b_c, title: 'Socket book' })
  if (created.status !== 'ok') throw new Error(`createBook: ${JSON.stringify(created)}`)
  for (const other of others) await invite(owner, target, other, right, true)
  return target
}

export async function invite(
  owner: Member,
  target: { b_o: string; b_c: string },
  other: Member,
  right = 2,
  accept = false
) {
  const invited = await owner.call({ req: 'inviteMember', ...target, member: other.code, right })
  if (invited.status !== 'ok') throw new Error(`inviteMember: ${JSON.stringify(invited)}`)
  if (!accept) return
  const accepted = await other.call({ req: 'acceptInvitation', ...target })
  if (accepted.status !== 'ok') throw new Error(`acceptInvitation: ${JSON.stringify(accepted)}`)
}

export async function messagesOf(
  viewer: Member,
  target: { b_o: string; b_c: string },
  extra: Record<string, unknown> = {}
) {
  const answer = await viewer.call({ req: 'getBookMessages', ...target, ...extra })
  if (answer.status !== 'ok') throw new Error(`getBookMessages: ${JSON.stringify(answer)}`)
  return answer.bookMessages as Record<string, any>[]
}
