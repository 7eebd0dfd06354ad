import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'

/** The credentials every api.php request and every socket frame carries. */
export interface Credentials {
  o_u: string
  u_c: string
  sesskey: string
}

const scalar = (value: unknown) =>
  typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : ''

/** o_u, u_c and sesskey of a parameter bag (api.php params or a socket frame), trimmed. */
export function credentialsOf(params: Record<string, unknown>): Credentials {
  return { o_u: scalar(params.o_u), u_c: scalar(params.u_c), sesskey: scalar(params.sesskey) }
}

/** Whether `login` (a code, e-mail or phone) names `user`. */
export async function isSameUser(
  users: UserService,
  login: string,
  user: { id: number; code: string }
) {
  if (login === user.code) return true
  const found = await users.findByLogin(login)
  return found?.id === user.id
}

/**
 * The one actor resolution of the kernel (api.php dispatcher and socket
 * frames): o_u + sesskey identify the caller; u_c names the user acted for,
 * o_u itself (by code, e-mail or phone) or another user o_u is a delegate of.
 * Callers check that sesskey and o_u are present first (their messages differ).
 */
export async function resolveActor(
  access: AccessService,
  users: UserService,
  credentials: Credentials
): Promise<Actor> {
  const { session, user: principal } = await access.resolveSession(credentials.sesskey)
  if (!(await isSameUser(users, credentials.o_u, principal))) {
    throw rpcError('USER_MISMATCH', 'o_u does not match the session', { process: 'invalid o_u' })
  }
  const user = await onBehalfTarget(users, principal, credentials.u_c)
  return {
    user,
    principal,
    session,
    restrictions: session.restrictions,
    onBehalf: user !== principal,
  }
}

/** The user u_c names for `principal`: the principal itself, or a user it may act on behalf of. */
export async function onBehalfTarget<U extends { id: number; code: string }>(
  users: UserService,
  principal: U,
  uc: string
): Promise<U> {
  if (uc === '' || (await isSameUser(users, uc, principal))) return principal
  const target = await users.findByLogin(uc)
  if (!target) throw rpcError('UNKNOWN_USER', `Unknown user: ${uc}`)
  if (!(await users.canActOnBehalf(principal.id, target.id))) {
    throw rpcError('ON_BEHALF_DENIED', `${principal.code} may not act on behalf of ${uc}`)
  }
  return target as unknown as U
}
