import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import { Database } from '@adonisjs/lucid/database'
import limiter from '@adonisjs/limiter/services/main'
import type User from '#models/user'
import { UserService } from '#core/services/user_service'
import { AccessService } from '#core/services/access_service'
import { readPage, whereContains, type PageRequest } from '#core/paging'
import { Clock } from './clock.js'
import { TokenService, type VerifiedAccess } from './token_service.js'
import { InvalidationBus } from '#core/invalidation/invalidation_bus'
import { AuthUserService } from './auth_user_service.js'
import { digest, opaqueToken } from './secrets.js'
import { authError } from '../errors.js'
import { AuthConfig } from '../config.js'

/** Who a valid bearer token speaks for. */
export interface BearerIdentity {
  userId: number
  userUuid: string
  userCode: string
  email: string | null
  /** Public id of the auth session (the token's `sid`). */
  sessionId: string
  claims: VerifiedAccess
}

export interface IssuedTokens {
  jwt: string
  refresh_token: string
  expires_in: number
  sessionId: string
}

export interface SessionMeta {
  clientId?: string | null
  ip?: string | null
  userAgent?: string | null
  nonce?: string | null
}

/** What the session-state cache keeps of an auth session, by the session's public id. */
export interface SessionState {
  userId: number
  active: boolean
}

/**
 * The container's key for the bus that keeps the session-state cache right: the provider binds
 * it to the kernel bus chosen at boot (Redis, in-process or none; app/core/invalidation/). A key
 * of the auth service's own, so that binding it claims nothing of the kernel's for other users.
 */
export abstract class SessionStateBus extends InvalidationBus<SessionState> {}

/**
 * Auth sessions: one per login, each with a chain of one-use refresh tokens.
 * Access tokens are short-lived JWTs naming their session; a bearer check
 * verifies the signature and that the session is still active (through the
 * session-state cache when it is trustworthy, the database otherwise).
 */
@inject()
export class SessionService {
  constructor(
    private db: Database,
    private clock: Clock,
    private tokens: TokenService,
    private users: UserService,
    private authUsers: AuthUserService,
    /** Chosen at boot with the session-state cache it keeps right (the provider's factory). */
    private bus: SessionStateBus,
    private access: AccessService,
    private config: AuthConfig
  ) {}

  private get refreshTtlSeconds() {
    return this.config.ttl.refreshSeconds
  }

  /** A new session for a user whose login just completed, with its first tokens. */
  async open(user: User, userUuid: string, meta: SessionMeta): Promise<IssuedTokens> {
    const now = this.clock.now()
    const publicId = randomUUID()
    const refreshToken = opaqueToken('rt_')
    await this.db.transaction(async (trx) => {
      const [id] = await trx.table('auth_sessions').insert({
        public_id: publicId,
        user_id: user.id,
        client_id: meta.clientId ?? null,
        ip: meta.ip?.slice(0, 64) ?? null,
        user_agent: meta.userAgent?.slice(0, 255) ?? null,
        created_at: now,
      })
      await trx.table('auth_refresh_tokens').insert({
        session_id: id,
        token_hash: digest(refreshToken),
        created_at: now,
        expires_at: now + this.refreshTtlSeconds * 1000,
      })
    })
    const { jwt, expiresIn } = await this.tokens.sign({
      sub: userUuid,
      sid: publicId,
      uid: user.id,
      u_c: user.code,
      email: user.email,
      ...(meta.nonce ? { nonce: meta.nonce } : {}),
      ...(meta.clientId ? { aud: meta.clientId } : {}),
    })
    return { jwt, refresh_token: refreshToken, expires_in: expiresIn, sessionId: publicId }
  }

  /**
   * Exchanges a refresh token for a new access token and a new refresh token.
   * A token is good once: presenting a used one means it leaked (or a client
   * raced itself), and the whole session is revoked.
   */
  async refresh(refreshToken: string): Promise<IssuedTokens> {
    const now = this.clock.now()
    const row = await this.db
      .from('auth_refresh_tokens as t')
      .join('auth_sessions as s', 's.id', 't.session_id')
      .where('t.token_hash', digest(refreshToken.trim()))
      .select(
        't.id',
        't.session_id',
        't.expires_at',
        't.used_at',
        's.public_id',
        's.user_id',
        's.client_id',
        's.revoked_at'
      )
      .first()
    if (!row) throw authError('invalid_refresh_token', 'Unknown refresh token')
    const userId = Number(row.user_id)
    if (row.revoked_at !== null)
      throw authError('invalid_refresh_token', 'The session of this refresh token was revoked')
    if (row.used_at !== null) await this.reuseDetected(Number(row.session_id), userId)
    if (Number(row.expires_at) <= now)
      throw authError('invalid_refresh_token', 'The refresh token has expired')

    const next = opaqueToken('rt_')
    const rotated = await this.db.transaction(async (trx) => {
      const claimed = await trx
        .from('auth_refresh_tokens')
        .where('id', row.id)
        .whereNull('used_at')
        .update({ used_at: now })
      if (Number(claimed) !== 1) return false
      await trx.table('auth_refresh_tokens').insert({
        session_id: row.session_id,
        token_hash: digest(next),
        created_at: now,
        expires_at: now + this.refreshTtlSeconds * 1000,
      })
      await trx.from('auth_sessions').where('id', row.session_id).update({ last_refreshed_at: now })
      return true
    })
    // Lost the race against a concurrent exchange of the same token: that is reuse too.
    if (!rotated) await this.reuseDetected(Number(row.session_id), userId)

    const user = await this.users.findById(userId)
    const authUser = await this.authUsers.find(userId)
    if (!user || !authUser)
      throw authError('invalid_refresh_token', 'The user of this refresh token no longer exists')
    const { jwt, expiresIn } = await this.tokens.sign({
      sub: authUser.uuid,
      sid: row.public_id,
      uid: userId,
      u_c: user.code,
      email: user.email,
      ...(row.client_id ? { aud: row.client_id } : {}),
    })
    return { jwt, refresh_token: next, expires_in: expiresIn, sessionId: row.public_id }
  }

  private async reuseDetected(sessionId: number, userId: number): Promise<never> {
    await this.revokeWhere(userId, (query) => query.where('id', sessionId), 'refresh_token_reuse')
    throw authError(
      'refresh_token_reused',
      'This refresh token was already used: the session is revoked, sign in again'
    )
  }

  /** The identity behind an `Authorization: Bearer` header, or the 'unauthorized' error. */
  async authenticate(header: string | undefined | null): Promise<BearerIdentity> {
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
    if (!match)
      throw authError(
        'unauthorized',
        'Authentication required: send Authorization: Bearer <access token>'
      )
    const claims = await this.tokens.verify(match[1])
    if (!claims) throw authError('unauthorized', 'The access token is invalid or has expired')
    if (!(await this.isActive(claims.sid, claims.uid))) {
      throw authError('unauthorized', 'The session of this access token was revoked')
    }
    return {
      userId: claims.uid,
      userUuid: claims.sub,
      userCode: claims.u_c,
      email: claims.email ?? null,
      sessionId: claims.sid,
      claims,
    }
  }

  private async isActive(sessionId: string, userId: number): Promise<boolean> {
    const cache = this.bus.cache
    const useCache = cache !== null && this.bus.healthy
    const now = this.clock.now()
    if (useCache) {
      const cached = cache.get(sessionId, now)
      if (cached) return cached.active && cached.userId === userId
    }
    const mark = cache?.mark() ?? 0
    const row = await this.db
      .from('auth_sessions')
      .where('public_id', sessionId)
      .select('user_id', 'revoked_at')
      .first()
    if (!row) return false
    const state: SessionState = { userId: Number(row.user_id), active: row.revoked_at === null }
    if (useCache) cache.set(sessionId, state, state.userId, mark, now)
    return state.active && state.userId === userId
  }

  /** Logout: ends one session (its access tokens fail from their next request, its refresh chain dies). */
  async revoke(identity: Pick<BearerIdentity, 'userId' | 'sessionId'>, reason = 'logout') {
    return this.revokeWhere(
      identity.userId,
      (query) => query.where('public_id', identity.sessionId),
      reason
    )
  }

  /** Logout by refresh token (a client that lost its access token). */
  async revokeByRefreshToken(refreshToken: string) {
    const row = await this.db
      .from('auth_refresh_tokens as t')
      .join('auth_sessions as s', 's.id', 't.session_id')
      .where('t.token_hash', digest(refreshToken.trim()))
      .select('s.id', 's.user_id', 's.revoked_at')
      .first()
    if (!row || row.revoked_at !== null)
      throw authError('invalid_refresh_token', 'Unknown refresh token or session already ended')
    return this.revokeWhere(Number(row.user_id), (query) => query.where('id', row.id), 'logout')
  }

  /**
   * revoke-others (4.B.1): every other auth session of the user, and every
   * request-API sesskey and oauthkey of the user (core's AccessService), so
   * that both worlds agree "only the current session remains". Rate limited
   * per user (AUTH_REVOKE_MAX_REQUESTS per AUTH_REVOKE_WINDOW): over the
   * limit the limiter's E_TOO_MANY_REQUESTS is thrown, before anything is revoked.
   */
  async revokeOthers(identity: Pick<BearerIdentity, 'userId' | 'userUuid' | 'sessionId'>) {
    const { maxRequests, window } = this.config.revokeOthers
    await limiter
      .use({ requests: maxRequests, duration: window })
      .consume(`auth:revoke-others:${identity.userUuid}`)
    const authSessions = await this.revokeAll(identity.userId, 'revoke_others', identity.sessionId)
    const api = await this.access.revokeAllSessionsOf(identity.userId, 'revoke-others')
    return { authSessions, apiSessions: api.sessions, oauthkeys: api.oauthkeys }
  }

  /** Every session of the user (e.g. after a password change), except `keep` when given. */
  async revokeAll(userId: number, reason: string, keepSessionId?: string) {
    return this.revokeWhere(
      userId,
      (query) => (keepSessionId ? query.whereNot('public_id', keepSessionId) : query),
      reason
    )
  }

  async listActive(userId: number) {
    const rows = await this.activeOf(userId).orderBy('id').select(ACTIVE_COLUMNS)
    return rows.map(activeView)
  }

  /** The same sessions, searched by client, address or browser and paged in SQL (the console). */
  pageActive(userId: number, request: PageRequest) {
    const query = whereContains(this.activeOf(userId), request.search, [
      'client_id',
      'ip',
      'user_agent',
    ])
    return readPage(query, request, (page) => page.orderBy('id').select(ACTIVE_COLUMNS), activeView)
  }

  private activeOf(userId: number) {
    return this.db.from('auth_sessions').where('user_id', userId).whereNull('revoked_at')
  }

  /**
   * The one revocation path: mark the sessions, then make every instance
   * forget what it cached about the user before answering.
   */
  private async revokeWhere(
    userId: number,
    scope: (query: any) => any,
    reason: string
  ): Promise<number> {
    const updated = await scope(
      this.db.from('auth_sessions').where('user_id', userId).whereNull('revoked_at')
    ).update({
      revoked_at: this.clock.now(),
      revoked_reason: reason,
    })
    await this.bus.invalidateUser(userId)
    return Number(updated)
  }
}

const ACTIVE_COLUMNS = [
  'public_id',
  'client_id',
  'ip',
  'user_agent',
  'created_at',
  'last_refreshed_at',
]

/** An active session as GET /auth/sessions and the console show it. */
function activeView(row: any) {
  return {
    id: row.public_id as string,
    client_id: (row.client_id as string | null) ?? null,
    ip: (row.ip as string | null) ?? null,
    user_agent: (row.user_agent as string | null) ?? null,
    created_at: new Date(Number(row.created_at)).toISOString(),
    last_refreshed_at:
      row.last_refreshed_at === null ? null : new Date(Number(row.last_refreshed_at)).toISOString(),
  }
}
