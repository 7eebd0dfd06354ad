import type { Actor } from '#core/rpc/base_operation'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import {
  actorOf,
  credentialsOf,
  onBehalfTarget,
  requiredCredentials,
  resolvePrincipal,
} from '#core/auth/resolve_actor'
import type User from '#models/user'
import type ApiSession from '#models/api_session'
import type { Frame } from './protocol.js'
import type { SocketHub } from './hub.js'
import type { Connection } from './connection.js'

/**
 * Authentication of socket frames: the kernel's one resolution
 * ('#core/auth/resolve_actor', as api.php's dispatcher uses it) with a
 * per-connection cache on top.
 *
 * Every frame carries o_u and sesskey. A frame whose keys equal those last
 * checked on its connection reuses that check for SOCKET_AUTH_RECHECK_MS
 * (unless the session has expired since; revocations close the socket at once
 * through the hub); any other keys are resolved in full. The user acted for
 * (u_c, or the handler's onBehalfField such as obo_u) is checked once per
 * principal and value. A successful full check (re)attaches the connection.
 */
export class SocketAuthenticator {
  constructor(
    private access: AccessService,
    private users: UserService,
    private hub: SocketHub,
    private config: { authRecheckMs: number }
  ) {}

  async authenticate(connection: Connection, frame: Frame, onBehalfField?: string): Promise<Actor> {
    const credentials = requiredCredentials(frame)
    const uc =
      (onBehalfField && credentialsOf({ u_c: frame[onBehalfField] }).u_c) || credentials.u_c

    const now = Date.now()
    let auth = connection.auth
    const fresh =
      auth !== null &&
      auth.sesskey === credentials.sesskey &&
      auth.o_u === credentials.o_u &&
      now - auth.checkedAt < this.config.authRecheckMs &&
      !(auth.session.expiresAt && auth.session.expiresAt.toMillis() < now)
    if (!fresh) {
      const { principal, session } = await resolvePrincipal(this.access, this.users, credentials)
      auth = {
        sesskey: credentials.sesskey,
        o_u: credentials.o_u,
        principal,
        session,
        checkedAt: now,
        onBehalf: new Map(),
      }
      connection.auth = auth
      this.bind(connection, principal, session)
    }
    const { principal, session, onBehalf } = auth!
    let user = onBehalf.get(uc)
    if (!user) {
      user = await onBehalfTarget(this.users, principal, uc)
      onBehalf.set(uc, user)
    }
    return actorOf(principal, session, user)
  }

  /** Attaches the connection to the principal and session (indexed by the hub for delivery). */
  private bind(connection: Connection, principal: User, session: ApiSession) {
    if (connection.attachTimer) {
      clearTimeout(connection.attachTimer)
      connection.attachTimer = null
    }
    if (connection.userId === principal.id && connection.sessionId === session.id) return
    this.hub.unindex(connection)
    connection.userId = principal.id
    connection.userCode = principal.code
    connection.sessionId = session.id
    this.hub.index(connection)
  }
}
