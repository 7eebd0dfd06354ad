import { DateTime } from 'luxon'
import Application from '#models/application'
import OauthKey from '#models/oauth_key'
import ApiSession, { NO_RESTRICTIONS, type SessionRestrictions } from '#models/api_session'
import UserModel from '#models/user'
import type User from '#models/user'
import db from '@adonisjs/lucid/services/db'
import { generateKey, hashKey } from '#core/auth/keys'
import { rpcError } from '#core/rpc/errors'
import { dbTimestamp } from '#core/db_time'
import { containsPattern, readPage, type PageRequest } from '#core/paging'
import { isMysql, readCached, readCachedNow, readQuery, writeQuery } from '#core/native_sql'
import { UserKeyedCache } from '#core/invalidation/user_keyed_cache'
import { RedisInvalidationBus, type InvalidationBus } from '#core/invalidation/invalidation_bus'
import { watchWrites, writesTo } from '#core/invalidation/write_watch'
import { HydrationCache } from '#core/hydration_cache'
import type { StampService } from './stamp_service.js'
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '#core/audit/audit_log'
import type { UserService } from './user_service.js'
import type { CredentialService } from './credential_service.js'
import { passwordPolicy } from './password_policy.js'
import emitter from '@adonisjs/core/services/emitter'

/** Emitted after commit when sessions are revoked: the realtime channel closes their sockets. */
export interface SessionsRevoked {
  userId: number
  /** The session that stays valid (dropAllSessions); null when every session went. */
  keptSessionId: number | null
  reason: string
  /** Only this session went (the console revoking one sesskey); the others stay. */
  onlySessionId?: number
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'core:sessions_revoked': SessionsRevoked
  }
}

export interface AccessSettings {
  /** Seconds a sesskey may stay unused before it expires; 0 = never. */
  sessionIdleTtl: number
  createUserAccount: boolean
}

const columnsOf = (model: typeof ApiSession | typeof User) =>
  [...model.$columnsDefinitions.values()].map((column) => column.columnName)

/**
 * SELECT of a session and its user in one statement, each column aliased by
 * its table (both have id, created_at...). Built once, from the models' columns.
 */
let joinedSql: string | null = null
function sessionWithUserSql() {
  joinedSql ??= `SELECT ${[
    ...columnsOf(ApiSession).map((column) => `s."${column}" AS "s.${column}"`),
    ...columnsOf(UserModel).map((column) => `u."${column}" AS "u.${column}"`),
  ]
    .join(', ')
    .replaceAll('"', db.connection().dialect.name === 'mysql' ? '`' : '"')} FROM api_sessions s
    LEFT JOIN users u ON u.id = s.user_id WHERE s.key_hash = ? LIMIT 1`
  return joinedSql
}

/**
 * The session's and the user's columns of a joined row; user null when the
 * user is gone. Kept per row object: a cached read answers the same object, and
 * the same halves let the hydration caches recognise their rows at once.
 */
const splitRows = new WeakMap<object, ReturnType<typeof splitRow>>()
function splitJoinedRow(row: Record<string, unknown>) {
  let split = splitRows.get(row)
  if (!split) {
    split = splitRow(row)
    splitRows.set(row, split)
  }
  return split
}

function splitRow(row: Record<string, unknown>) {
  const session: Record<string, any> = {}
  const user: Record<string, any> = {}
  for (const key in row) {
    if (key.charCodeAt(0) === 115 /* s */) session[key.slice(2)] = row[key]
    else user[key.slice(2)] = row[key]
  }
  return { session, user: user.id === null || user.id === undefined ? null : user }
}

/**
 * The digests of the sesskeys seen lately (resolveSession): a SHA-256 of a sesskey is about
 * 1.5 µs, on every api.php request and socket frame, always of the same few keys. Only the
 * digest's computation is saved: the session is read (readCached) as before. Emptied when full.
 */
const SESSKEY_DIGESTS = 10_000
/** Sesskeys are 34 characters (generateKey): longer text is no key and is not kept. */
const SESSKEY_DIGEST_MAX_LENGTH = 64
const sesskeyDigests = new Map<string, string>()

function sesskeyDigest(sesskey: string): string {
  if (sesskey.length > SESSKEY_DIGEST_MAX_LENGTH) return hashKey(sesskey)
  let digest = sesskeyDigests.get(sesskey)
  if (digest === undefined) {
    if (sesskeyDigests.size >= SESSKEY_DIGESTS) sesskeyDigests.clear()
    digest = hashKey(sesskey)
    sesskeyDigests.set(sesskey, digest)
  }
  return digest
}

/** How often last_used_at is written for one session (it only feeds idle expiry). */
const TOUCH_INTERVAL_MS = 60_000

/** A joined session + user row (sessionWithUserSql), as the database answered it. */
type SessionRow = Record<string, unknown>

/**
 * The session cache's safety net: a change that reached no instance (a write outside knex that
 * forgot to invalidate, a Redis hiccup) is answered for 5 s at most.
 */
const API_SESSION_CACHE_TTL_MS = 5_000
const API_SESSION_CACHE_MAX_ENTRIES = 50_000

/** The statements that may change a cached session or its user: they empty every instance's cache. */
export const writesSessionTables = writesTo(['users', 'api_sessions'])

/**
 * The session cache of MariaDB + Redis: the session behind a sesskey digest and its user, kept
 * in the process (a UserKeyedCache, app/core/invalidation/), one per process, started by the
 * first AccessService. On MariaDB the session read is a round trip on every api.php request and
 * socket frame (sendMsg's only one outside its group-committed batch); SQLite needs none of this
 * (readCached keeps that read until a commit writes api_sessions or users), and MariaDB without
 * Redis has none (several instances could not tell each other).
 *
 * It is correct only while every change of a session or a user reaches it: every revocation
 * drops the user's entries on every instance through the bus and waits for their
 * acknowledgements before it answers (sessionsChanged), and every knex write to users or
 * api_sessions empties every instance's cache once its transaction is over (watchWrites).
 * Processes that do not serve requests (ace commands) get a bus without a cache: their
 * revocations still reach every serving instance, and their writes to users and api_sessions too.
 */
let sessionBus: Promise<InvalidationBus<SessionRow> | null> | null = null
/** When this process last wrote a session's last_used_at (by session id): see touch. */
const touchedAt = new Map<number, number>()
let startedBus: InvalidationBus<SessionRow> | null = null

function startSessionBus(): Promise<InvalidationBus<SessionRow> | null> {
  sessionBus ??= (async () => {
    if (!isMysql()) return null
    const { default: quireConfig } = await import('#config/quire')
    if (!quireConfig.redisEnabled) return null
    const [{ default: app }, { default: redis }, { default: logger }, { default: env }] =
      await Promise.all([
        import('@adonisjs/core/services/app'),
        import('@adonisjs/redis/services/main'),
        import('@adonisjs/core/services/logger'),
        import('#start/env'),
      ])
    const serving = ['web', 'test'].includes(app.getEnvironment())
    const cache = serving
      ? new UserKeyedCache<SessionRow>({
          ttlMs: API_SESSION_CACHE_TTL_MS,
          maxEntries: API_SESSION_CACHE_MAX_ENTRIES,
        })
      : null
    const bus = new RedisInvalidationBus(
      redis.connection('main'),
      cache,
      logger,
      `${env.get('REDIS_PREFIX', 'quire:')}api-sessions`
    )
    await bus.start()
    // Every knex write to users or api_sessions empties every instance's cache once it is over.
    const connection = db.connection()
    watchWrites(
      [connection.getWriteClient(), connection.getReadClient()],
      writesSessionTables,
      () => void bus.invalidateAll({ wait: false })
    )
    startedBus = bus
    return bus
  })().catch(() => {
    // Too early (the database service is not ready while providers register): tried again
    // by the next call.
    sessionBus = null
    return null
  })
  return sessionBus
}

/**
 * appkeys, oauthkeys and sesskeys: creation, resolution and revocation. Every
 * entry point (api.php operations, ace commands, the auth service) calls these
 * methods; nothing else reads the key tables.
 */
export class AccessService {
  private sessionModels = new HydrationCache((row) => ApiSession.$createFromAdapterResult(row)!)

  constructor(
    private stamps: StampService,
    private users: UserService,
    private credentials: CredentialService,
    private settings: AccessSettings,
    private audit: AuditLog
  ) {
    // Started with the service, not at the first request: an ace command that revokes sessions
    // or writes users must reach the serving instances' caches.
    setImmediate(() => void startSessionBus())
  }

  /** The session cache when it may be trusted right now (MariaDB + Redis, subscribed); else null. */
  private sessionCache(): UserKeyedCache<SessionRow> | null {
    const bus = startedBus
    if (!bus && !sessionBus) void startSessionBus()
    return bus?.healthy ? bus.cache : null
  }

  /**
   * After a commit that ended or changed sessions of `userId`: every instance drops that user's
   * cached sessions before this resolves (the revoking request answers after it), so the next
   * request with one of them reads the database wherever it lands.
   */
  private async sessionsChanged(userId: number) {
    const bus = await startSessionBus()
    await bus?.invalidateUser(userId)
  }

  async createAppkey(name: string) {
    const appkey = generateKey()
    const application = await this.stamps.write(async ({ trx }) =>
      Application.create({ name: name.trim(), keyHash: hashKey(appkey) }, { client: trx })
    )
    return { appkey, application }
  }

  /**
   * Authorizes a user in an application. The login and password go through
   * the one credential check (CredentialService: throttling per login and per
   * address shared with every other sign-in, a dummy hash for unknown logins).
   */
  async createOauthkey(input: {
    appkey: string
    login: string
    pwd: string
    ip: string
    createUserAccount?: boolean
  }) {
    const application = await Application.query()
      .where('keyHash', hashKey(input.appkey.trim()))
      .whereNull('revokedAt')
      .first()
    if (!application)
      throw rpcError('INVALID_APPKEY', 'Invalid appkey', { process: 'invalid appkey' })

    const check = await this.credentials.verify(input.login, input.pwd, input.ip, {
      whenUnknown: input.createUserAccount
        ? () => this.createAccountFor(input.login, input.pwd)
        : undefined,
    })
    if (!check.ok && check.reason === 'throttled') {
      throw rpcError(
        'TOO_MANY_ATTEMPTS',
        `Too many failed logins, retry in ${check.retryAfter} seconds`,
        { retryAfter: check.retryAfter }
      )
    }
    if (!check.ok) throw rpcError('INVALID_LOGIN', 'Invalid login or password')
    const user = check.user
    // Said only after a right password: the flag of an account is not for anyone to probe.
    if (user.apiPasswordDisabled) {
      throw rpcError(
        'PASSWORD_SIGN_IN_DISABLED',
        'Password sign-in on api.php is turned off for this account: create an oauthkey in the admin console (Account page)'
      )
    }

    const oauthkey = generateKey()
    const record = await this.stamps.write(async ({ trx }) =>
      OauthKey.create(
        { applicationId: application.id, userId: user.id, keyHash: hashKey(oauthkey) },
        { client: trx }
      )
    )
    return { oauthkey, record, user }
  }

  private async createAccountFor(login: string, pwd: string) {
    if (!this.settings.createUserAccount) {
      throw rpcError('ACCOUNT_CREATION_DISABLED', 'createUserAccount is not enabled on this server')
    }
    passwordPolicy.assert(pwd, 'pwd')
    const isEmail = login.includes('@')
    if (!isEmail && !/^\+?[\d\s().-]{6,}$/.test(login)) {
      throw rpcError(
        'INVALID_PARAMETER',
        'createUserAccount needs an e-mail address or a phone number as login'
      )
    }
    return this.users.create({
      code: await this.users.freeCodeFor(isEmail ? login : `u${login.replace(/\D/g, '')}`),
      email: isEmail ? login : null,
      phone: isEmail ? null : login,
      password: pwd,
    })
  }

  /**
   * An oauthkey made in the admin console for the signed-in user (a personal
   * key: no password asked, the console sign-in was the check), in the live
   * application of that name, created when there is none (its appkey is not
   * needed to use the oauthkey, and is not kept). Answered in clear this once.
   */
  async issueOauthkey(user: User, applicationName: string) {
    const name = applicationName.trim()
    let application = await Application.query()
      .where('name', name)
      .whereNull('revokedAt')
      .orderBy('id', 'desc')
      .first()
    if (!application) ({ application } = await this.createAppkey(name))
    const applicationId = application.id
    const oauthkey = generateKey()
    const record = await this.stamps.write(async ({ trx }) =>
      OauthKey.create(
        { applicationId, userId: user.id, keyHash: hashKey(oauthkey) },
        { client: trx }
      )
    )
    return { oauthkey, record, application }
  }

  /** A user's live oauthkeys, newest first, searched by application name, paged in SQL (the console). */
  async oauthkeysOf(userId: number, request: PageRequest) {
    const query = db
      .from('oauth_keys as k')
      .leftJoin('applications as a', 'a.id', 'k.application_id')
      .where('k.user_id', userId)
      .whereNull('k.revoked_at')
    const like = containsPattern(request.search)
    if (like) query.whereRaw('LOWER(a.name) LIKE ?', [like])
    return readPage(
      query,
      request,
      (page) =>
        page
          .orderBy('k.id', 'desc')
          .select('k.id', 'k.created_at', 'k.last_used_at', 'a.name as app_name'),
      (row) => ({
        id: Number(row.id),
        appName: row.app_name ?? null,
        createdAt: row.created_at ? new Date(row.created_at).toISOString() : null,
        lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
      })
    )
  }

  /** Revokes one oauthkey of a user and every sesskey made from it (their sockets close). */
  async revokeOauthkeyOf(userId: number, oauthKeyId: number, reason = 'oauthkey revoked') {
    const revoked = await this.stamps.write(async ({ trx, afterCommit }) => {
      const now = dbTimestamp()
      const updated = await trx
        .from('oauth_keys')
        .where('id', oauthKeyId)
        .where('user_id', userId)
        .whereNull('revoked_at')
        .update({ revoked_at: now })
      if (Number(updated) !== 1) return false
      const sessions = await trx
        .from('api_sessions')
        .where('oauth_key_id', oauthKeyId)
        .whereNull('revoked_at')
        .select('id')
      const ids = sessions.map((row) => Number(row.id))
      if (ids.length) {
        await trx
          .from('api_sessions')
          .whereIn('id', ids)
          .update({ revoked_at: now, revoked_reason: reason.slice(0, 64) })
      }
      afterCommit(() => {
        for (const id of ids)
          emitter.emit('core:sessions_revoked', {
            userId,
            keptSessionId: null,
            reason,
            onlySessionId: id,
          })
      })
      return true
    })
    if (revoked) await this.sessionsChanged(userId)
    return revoked
  }

  /** Finds the live oauthkey of a user (o_u may be the user's code, e-mail or phone). */
  private async oauthKeyOf(oauthkey: string, login: string) {
    const record = await OauthKey.query()
      .where('keyHash', hashKey(oauthkey.trim()))
      .whereNull('revokedAt')
      .first()
    if (!record) return null
    const user = await this.users.findById(record.userId)
    if (!user) return null
    const owner = await this.users.findByLogin(login)
    if (!owner || owner.id !== user.id) return null
    return { record, user }
  }

  async createSesskey(input: { o_u: string; oauthkey: string; restrictions: SessionRestrictions }) {
    const found = await this.oauthKeyOf(input.oauthkey, input.o_u)
    if (!found) {
      throw rpcError('INVALID_OAUTHKEY', 'Invalid oauthkey or o_u', {
        process: 'invalid oauthkey or o_u',
      })
    }
    const { record, user } = found
    const application = await Application.find(record.applicationId)
    const sesskey = generateKey()
    const session = await this.stamps.write(async ({ trx }) => {
      await trx.from('oauth_keys').where('id', record.id).update({ last_used_at: dbTimestamp() })
      return ApiSession.create(
        {
          userId: user.id,
          applicationId: record.applicationId,
          oauthKeyId: record.id,
          keyHash: hashKey(sesskey),
          restrictions: input.restrictions,
          expiresAt: this.expiryFromNow(),
          lastUsedAt: DateTime.now(),
        },
        { client: trx }
      )
    })
    await this.users.recordConnection(user)
    return { sesskey, session, user, appName: application?.name ?? '' }
  }

  private expiryFromNow() {
    const ttl = this.settings.sessionIdleTtl
    return ttl > 0 ? DateTime.now().plus({ seconds: ttl }) : null
  }

  /**
   * The session behind a sesskey, or a nok: unknown or dropped keys are
   * INVALID_SESSKEY, idle ones SESSION_EXPIRED.
   */
  async resolveSession(sesskey: string): Promise<{ session: ApiSession; user: User }> {
    const digest = sesskeyDigest(sesskey.trim())
    const cache = this.sessionCache()
    // Every api.php request and socket frame comes through here: one driver-level statement
    // for the session and its user, models reused while their rows are unchanged. On SQLite the
    // statement's result is kept until a commit writes either table (readCached); on MariaDB +
    // Redis a live session is kept in the process (the session cache above), or read every time.
    const cached = cache?.get(digest)
    const mark = cached || !cache ? 0 : cache.mark()
    const row = cached ?? (await this.readSessionRow(digest, cache))
    // null: a cached session found expired was forgotten; another instance may have slid it.
    return (
      this.liveSession(digest, row, cached !== undefined, cache, mark) ??
      this.resolveSession(sesskey)
    )
  }

  /**
   * resolveSession without waiting where its read needs none (SQLite's readCachedNow, or the
   * session cache's hit), else null (resolveSession then): the dispatcher's first try.
   */
  resolveSessionNow(sesskey: string): { session: ApiSession; user: User } | null {
    const digest = sesskeyDigest(sesskey.trim())
    const cache = this.sessionCache()
    let row: SessionRow | undefined
    if (cache) {
      row = cache.get(digest)
      if (!row) return null
    } else {
      const rows = readCachedNow(sessionWithUserSql(), [digest])
      if (!rows) return null
      row = rows[0]
    }
    return this.liveSession(digest, row, cache !== null, cache, 0)
  }

  /**
   * The live session of a read row, or a nok. null when the row came from the session cache and
   * the session had expired there: it is forgotten, and the caller reads it again.
   */
  private liveSession(
    digest: string,
    row: SessionRow | undefined,
    fromCache: boolean,
    cache: UserKeyedCache<SessionRow> | null,
    mark: number
  ): { session: ApiSession; user: User } | null {
    if (!row) throw rpcError('INVALID_SESSKEY', 'Invalid sesskey: unknown or dropped session')
    const { session: sessionRow, user: userRow } = splitJoinedRow(row)
    const session = this.sessionModels.model(sessionRow.id, sessionRow)
    if (session.revokedAt)
      throw rpcError('INVALID_SESSKEY', 'Invalid sesskey: unknown or dropped session')
    // In milliseconds: DateTime.now() made a zoned DateTime on every request.
    if (session.expiresAt && session.expiresAt.toMillis() < Date.now()) {
      // A refusal is never answered from the cache: another instance may have slid the expiry.
      if (fromCache) {
        cache!.forget(digest)
        return null
      }
      throw rpcError('SESSION_EXPIRED', 'The session expired, create a new sesskey')
    }
    const user = userRow ? this.users.modelOf(userRow) : null
    if (!user) throw rpcError('INVALID_SESSKEY', 'Invalid sesskey: the user no longer exists')
    // Only a live session is kept, and only if nothing invalidated it while it was read.
    if (!fromCache && cache) cache.set(digest, row, user.id, mark)
    this.touch(session, digest)
    return { session, user }
  }

  /** The joined session + user row of a digest: kept by readCached on SQLite, read on MariaDB. */
  private async readSessionRow(digest: string, cache: UserKeyedCache<SessionRow> | null) {
    const [row] = cache
      ? await readQuery(sessionWithUserSql(), [digest])
      : await readCached(sessionWithUserSql(), [digest])
    return row
  }

  /** Slides idle expiry forward, at most once a minute per session (a read must not write every time). */
  private touch(session: ApiSession, digest: string) {
    const lastUsed = Math.max(session.lastUsedAt?.toMillis() ?? 0, touchedAt.get(session.id) ?? 0)
    if (Date.now() - lastUsed < TOUCH_INTERVAL_MS) return
    // Requests that arrive while the write is on its way do not write again.
    if (touchedAt.size >= 10_000) touchedAt.clear()
    touchedAt.set(session.id, Date.now())
    const expiry = this.expiryFromNow()
    const values = { last_used_at: dbTimestamp(), expires_at: expiry ? dbTimestamp(expiry) : null }
    if (!isMysql()) {
      void ApiSession.query()
        .where('id', session.id)
        .update(values)
        .catch(() => {})
      return
    }
    // On MariaDB a driver-level statement: a knex write to api_sessions would empty every
    // instance's session cache (watchWrites), and a touch changes nothing another instance must
    // see at once (an expiry it holds is only earlier, and an expiry is re-read before it is
    // refused). This process's entry is dropped once written: its next request sees the new times.
    void writeQuery(
      db.connection(),
      'UPDATE api_sessions SET last_used_at = ?, expires_at = ? WHERE id = ?',
      [values.last_used_at, values.expires_at, session.id]
    ).then(
      () => startedBus?.cache?.forget(digest),
      () => {}
    )
  }

  /**
   * getOrCreateSessKey: a still valid sesskey is answered back as is; otherwise
   * a new session is created from the oauthkey.
   */
  async getOrCreateSesskey(input: { o_u: string; sesskey?: string; oauthkey?: string }) {
    if (input.sesskey) {
      try {
        const { session, user } = await this.resolveSession(input.sesskey)
        const owner = await this.users.findByLogin(input.o_u)
        if (owner && owner.id === user.id) return { sesskey: input.sesskey.trim(), session, user }
      } catch {
        // an expired or dropped sesskey falls through to the oauthkey
      }
    }
    if (!input.oauthkey) {
      throw rpcError(
        'INVALID_SESSKEY',
        'The sesskey is not valid for o_u and no oauthkey was given to create one'
      )
    }
    const created = await this.createSesskey({
      o_u: input.o_u,
      oauthkey: input.oauthkey,
      restrictions: NO_RESTRICTIONS,
    })
    return { sesskey: created.sesskey, session: created.session, user: created.user }
  }

  /**
   * dropAllSessions: every other session and every other oauthkey of the user
   * is revoked; the given session (and the oauthkey it came from) remain.
   */
  async dropOtherSessions(keep: ApiSession, reason = 'dropAllSessions') {
    const dropped = await this.stamps.write(async ({ trx, afterCommit }) => {
      afterCommit(() =>
        emitter.emit('core:sessions_revoked', {
          userId: keep.userId,
          keptSessionId: keep.id,
          reason,
        })
      )
      const now = dbTimestamp()
      const sessions = await trx
        .from('api_sessions')
        .where('user_id', keep.userId)
        .whereNot('id', keep.id)
        .whereNull('revoked_at')
        .update({ revoked_at: now, revoked_reason: reason })
      const oauthQuery = trx
        .from('oauth_keys')
        .where('user_id', keep.userId)
        .whereNull('revoked_at')
      if (keep.oauthKeyId) oauthQuery.whereNot('id', keep.oauthKeyId)
      await oauthQuery.update({ revoked_at: now })
      return { sessions: Number(sessions) }
    })
    await this.sessionsChanged(keep.userId)
    return dropped
  }

  /** A user's open sesskeys, newest first, searched by application name or id, paged in SQL (the console's Users page). */
  async sessionsOf(userId: number, request: PageRequest) {
    const query = db
      .from('api_sessions as s')
      .leftJoin('applications as a', 'a.id', 's.application_id')
      .where('s.user_id', userId)
      .whereNull('s.revoked_at')
    const like = containsPattern(request.search)
    if (like) {
      const id = Number(request.search)
      query.where((scope) => {
        scope.whereRaw('LOWER(a.name) LIKE ?', [like])
        if (Number.isSafeInteger(id)) scope.orWhere('s.id', id)
      })
    }
    return readPage(
      query,
      request,
      (page) =>
        page
          .orderBy('s.id', 'desc')
          .select('s.id', 's.created_at', 's.last_used_at', 's.expires_at', 'a.name as app_name'),
      (row) => ({
        id: Number(row.id),
        appName: row.app_name ?? null,
        createdAt: row.created_at ? new Date(row.created_at).toISOString() : null,
        lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
        expiresAt: row.expires_at ? new Date(row.expires_at).toISOString() : null,
      })
    )
  }

  /** Drops one sesskey of a user (the admin console): its next request answers INVALID_SESSKEY. */
  async revokeSessionOf(
    userId: number,
    sessionId: number,
    reason = 'console',
    by: AuditActor = SYSTEM_ACTOR
  ) {
    const revoked = await this.stamps.write(async ({ trx, afterCommit }) => {
      // Its sockets close at once, on every instance, as for dropAllSessions.
      afterCommit(() =>
        emitter.emit('core:sessions_revoked', {
          userId,
          keptSessionId: null,
          reason,
          onlySessionId: sessionId,
        })
      )
      const updated = await trx
        .from('api_sessions')
        .where('id', sessionId)
        .where('user_id', userId)
        .whereNull('revoked_at')
        .update({ revoked_at: dbTimestamp(), revoked_reason: reason.slice(0, 64) })
      if (Number(updated) === 1)
        await this.audit.record(
          {
            actor: by,
            kind: 'session.revoked',
            target: await this.audit.userTarget(userId, trx),
            changes: { apiSession: { from: sessionId, to: null } },
          },
          trx
        )
      return Number(updated) === 1
    })
    if (revoked) await this.sessionsChanged(userId)
    return revoked
  }

  /**
   * Every sesskey and oauthkey of a user, none kept: the authentication
   * service's revoke-others (its caller holds an auth session, not a sesskey),
   * so that both worlds agree on "only the current session remains".
   */
  async revokeAllSessionsOf(userId: number, reason: string, by: AuditActor = SYSTEM_ACTOR) {
    const revoked = await this.stamps.write(async ({ trx, afterCommit }) => {
      afterCommit(() =>
        emitter.emit('core:sessions_revoked', { userId, keptSessionId: null, reason })
      )
      // Formatted as Lucid stores DateTime columns: a JS Date reaches SQLite as a number the models cannot read.
      const now = DateTime.now().toFormat(trx.dialect.dateTimeFormat)
      const sessions = await trx
        .from('api_sessions')
        .where('user_id', userId)
        .whereNull('revoked_at')
        .update({ revoked_at: now, revoked_reason: reason.slice(0, 64) })
      const oauthkeys = await trx
        .from('oauth_keys')
        .where('user_id', userId)
        .whereNull('revoked_at')
        .update({ revoked_at: now })
      if (Number(sessions) + Number(oauthkeys) > 0)
        await this.audit.record(
          {
            actor: by,
            kind: 'session.revoked_all',
            target: await this.audit.userTarget(userId, trx),
            changes: {
              apiSessions: { from: Number(sessions), to: 0 },
              oauthkeys: { from: Number(oauthkeys), to: 0 },
            },
          },
          trx
        )
      return { sessions: Number(sessions), oauthkeys: Number(oauthkeys) }
    })
    await this.sessionsChanged(userId)
    return revoked
  }
}
