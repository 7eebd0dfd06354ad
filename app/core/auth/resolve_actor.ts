import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import type User from '#models/user'
import type ApiSession from '#models/api_session'

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

/**
 * The credentials of a request that must be authenticated: sesskey and o_u are
 * required (u_c is optional: it defaults to o_u).
 */
export function requiredCredentials(params: Record<string, unknown>): Credentials {
  const credentials = credentialsOf(params)
  if (credentials.sesskey === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey')
  if (credentials.o_u === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: o_u')
  return credentials
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
 * The session a sesskey names, checked against o_u (by code, e-mail or
 * phone): the first half of every authentication. The socket caches its
 * result per connection for SOCKET_AUTH_RECHECK_MS.
 */
export async function resolvePrincipal(
  access: AccessService,
  users: UserService,
  credentials: Pick<Credentials, 'o_u' | 'sesskey'>
): Promise<{ principal: User; session: ApiSession }> {
  const { session, user: principal } = await access.resolveSession(credentials.sesskey)
  if (!(await isSameUser(users, credentials.o_u, principal))) {
    throw rpcError('USER_MISMATCH', 'o_u does not match the session', { process: 'invalid o_u' })
  }
  return { principal, session }
}

/** The actor of an authenticated session acting for `user` (itself, or a user it is a delegate of). */
export function actorOf(principal: User, session: ApiSession, user: User): Actor {
  return {
    user,
    principal,
    session,
    restrictions: session.restrictions,
    onBehalf: user !== principal,
  }
}

/**
 * The one actor resolution of the kernel (api.php dispatcher and socket
 * frames): o_u + sesskey identify the caller; u_c names the user acted for,
 * o_u itself (by code, e-mail or phone) or another user o_u is a delegate of.
 */
export async function resolveActor(
  access: AccessService,
  users: UserService,
  credentials: Credentials
): Promise<Actor> {
  const { principal, session } = await resolvePrincipal(access, users, credentials)
  return actorOf(principal, session, await onBehalfTarget(users, principal, credentials.u_c))
}

/**
 * resolveActor without waiting, for the common case that needs no wait: the session read at once
 * (AccessService.resolveSessionNow), o_u its user's code and u_c empty or the same. null
 * otherwise (resolveActor then); a refused session throws as there. The api.php dispatcher tries
 * it first: each async layer of the resolution cost a promise and microtask turns a request.
 */
export function resolveActorNow(access: AccessService, credentials: Credentials): Actor | null {
  const resolved = access.resolveSessionNow(credentials.sesskey)
  if (!resolved) return null
  const { session, user: principal } = resolved
  if (credentials.o_u !== principal.code) return null
  if (credentials.u_c !== '' && credentials.u_c !== principal.code) return null
  return actorOf(principal, session, principal)
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
