import { DateTime } from 'luxon'
import hash from '@adonisjs/core/services/hash'
import emitter from '@adonisjs/core/services/emitter'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import type { StampService } from './stamp_service.js'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { rpcError } from '#core/rpc/errors'
import { isUniqueViolation } from './db_errors.js'
import { dbTimestamp } from '#core/db_time'
import { readPage, whereContains, type PageRequest } from '#core/paging'
import { readQuery } from '#core/native_sql'
import { HydrationCache } from '#core/hydration_cache'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { UserInfoContributor } from '#core/plugins/define_plugin'
import { serializeUserInfo } from '#core/serializers/user_info_serializer'
import { passwordPolicy } from './password_policy.js'
import { CHANGED, SYSTEM_ACTOR, diff, type AuditActor, type AuditLog } from '#core/audit/audit_log'

/** getUserInfo's userInfo: serializeUserInfo's frozen object. */
type UserInfo = ReturnType<typeof serializeUserInfo>

export interface NewUser {
  code: string
  email?: string | null
  phone?: string | null
  password: string
  firstName?: string
  lastName?: string
  isAdmin?: boolean
}

// Re-exported for the callers that import it from here (books' services, the console).
export { DEFAULT_RIGHTS } from '#core/user_defaults'

export const normalizeEmail = (email: string) => email.trim().toLowerCase()
/** Phone numbers compare on digits and a leading +. */
export const normalizePhone = (phone: string) => phone.trim().replace(/[^\d+]/g, '')
const looksLikePhone = (login: string) => /^\+?[\d\s().-]{6,}$/.test(login.trim())

/** A new account, after its write commits (books turns pending invitations to its address into invitations). */
export interface UserCreated {
  userId: number
  email: string | null
  phone: string | null
}

declare module '@adonisjs/core/types' {
  interface EventsList {
    'core:user_created': UserCreated
  }
}

/** A user's code never changes: the id -> code map can be cached for the process's life. */
const CODE_CACHE_SIZE = 100_000
const IN_LIST_CHUNK = 500

function chunked<T>(items: T[]): T[][] {
  const result: T[][] = []
  for (let index = 0; index < items.length; index += IN_LIST_CHUNK)
    result.push(items.slice(index, index + IN_LIST_CHUNK))
  return result
}

/**
 * Users: lookup by any login form, creation, delegation, connection
 * bookkeeping. The only reader of the `users` table: plugins ask here.
 */
export class UserService {
  private userModels = new HydrationCache((row) => User.$createFromAdapterResult(row)!)
  private codeCache = new Map<number, string>()

  constructor(
    private stamps: StampService,
    private plugins: () => Promise<PluginRegistry>,
    private audit: AuditLog
  ) {}

  /** The plugins' userInfo contributors, once all are loaded: asked on every getUserInfo. */
  private contributors: UserInfoContributor[] | null = null

  /**
   * getUserInfo's userInfo, with the fields each plugin contributes (nbBooks, ...). Frozen. At
   * once when every contributor answers at once (SQLite), else a promise.
   */
  userInfo(user: User): UserInfo | Promise<UserInfo> {
    const contributors = this.contributors
    if (!contributors) return this.loadContributors().then(() => this.userInfo(user))
    const contributed: Record<string, unknown> = {}
    for (const [index, contribute] of contributors.entries()) {
      const part = contribute(user.id)
      if (part instanceof Promise) return this.userInfoAfter(user, contributed, part, index + 1)
      Object.assign(contributed, part)
    }
    return serializeUserInfo(user, contributed)
  }

  /** userInfo once a contributor's promise is answered, the contributors after it asked then. */
  private async userInfoAfter(
    user: User,
    contributed: Record<string, unknown>,
    waiting: Promise<Record<string, unknown>>,
    next: number
  ): Promise<UserInfo> {
    Object.assign(contributed, await waiting)
    for (const contribute of this.contributors!.slice(next))
      Object.assign(contributed, await contribute(user.id))
    return serializeUserInfo(user, contributed)
  }

  /** Kept only once every contributor loaded (a failed import is tried again on the next call). */
  private async loadContributors(): Promise<UserInfoContributor[]> {
    const registry = await this.plugins()
    const contributors: UserInfoContributor[] = []
    for (const contributor of registry.userInfoContributors) {
      const { default: contribute } = await contributor()
      contributors.push(contribute)
    }
    this.contributors = contributors
    return contributors
  }

  /** By id, with a driver-level statement: every authenticated request asks for its user. */
  async findById(id: number): Promise<User | null> {
    const [row] = await readQuery('SELECT * FROM users WHERE id = ? LIMIT 1', [id])
    return row ? this.modelOf(row) : null
  }

  /** The model of a users row read by a driver-level statement (reused while the row is unchanged). */
  modelOf(row: Record<string, unknown>): User {
    return this.userModels.model(row.id, row)
  }

  /**
   * Users' codes by id (ids without a user are absent). Cached: message and
   * member listings ask for the same few codes on every call, and a join to
   * users would mislead the planner (see books' message queries).
   */
  async codesOf(ids: Iterable<number>): Promise<Map<number, string>> {
    const result = new Map<number, string>()
    const missing: number[] = []
    for (const id of new Set([...ids].map(Number))) {
      const known = this.codeCache.get(id)
      if (known === undefined) missing.push(id)
      else result.set(id, known)
    }
    for (const group of chunked(missing)) {
      const rows = await db.from('users').whereIn('id', group).select('id', 'code')
      for (const row of rows) {
        if (this.codeCache.size >= CODE_CACHE_SIZE) this.codeCache.clear()
        this.codeCache.set(Number(row.id), String(row.code))
        result.set(Number(row.id), String(row.code))
      }
    }
    return result
  }

  /** Users' ids by code (codes without a user are absent). */
  async idsOfCodes(codes: Iterable<string>): Promise<Map<string, number>> {
    const result = new Map<string, number>()
    for (const group of chunked([...new Set(codes)])) {
      const rows = await db.from('users').whereIn('code', group).select('id', 'code')
      for (const row of rows) result.set(String(row.code), Number(row.id))
    }
    return result
  }

  findByCode(code: string) {
    return User.findBy('code', code)
  }

  /** A login is a user code, an e-mail address or a phone number. */
  async findByLogin(login: string): Promise<User | null> {
    const trimmed = login.trim()
    if (trimmed === '') return null
    const byCode = await User.findBy('code', trimmed)
    if (byCode) return byCode
    if (trimmed.includes('@')) return User.findBy('email', normalizeEmail(trimmed))
    if (looksLikePhone(trimmed)) return User.findBy('phone', normalizePhone(trimmed))
    return null
  }

  /**
   * Users whose mob1 (the phone column) or userPrefs mob2, reduced to digits
   * and +, is one of `forms` (the ways one number may be written): candidates
   * that the caller compares exactly (the gateways plugin, in E.164). mob1 is
   * a unique indexed column; mob2 lives in the prefs JSON, so asking for it
   * reads every row that has one.
   */
  async findByPhoneForms(forms: string[], field: 'mob1' | 'mob2'): Promise<User[]> {
    if (forms.length === 0) return []
    if (field === 'mob1') return User.query().whereIn('phone', forms).limit(50)
    const mysql = db.connection().dialect.name === 'mysql'
    const mob2 = mysql
      ? `CASE WHEN JSON_VALID(prefs) THEN JSON_UNQUOTE(JSON_EXTRACT(prefs, '$.mob2')) END`
      : `CASE WHEN json_valid(prefs) THEN json_extract(prefs, '$.mob2') END`
    const digits = [' ', '-', '.', '(', ')', '/'].reduce(
      (expression, separator) => `REPLACE(${expression}, '${separator}', '')`,
      mob2
    )
    return User.query()
      .where('prefs', 'like', '%mob2%')
      .whereRaw(`${digits} IN (${forms.map(() => '?').join(', ')})`, forms)
      .limit(50)
  }

  async verifyPassword(user: User, password: string) {
    return hash.verify(user.password, password)
  }

  /** `by`: who creates it, for the audit log (the console's administrator, an ace command). */
  async create(input: NewUser, by: AuditActor = SYSTEM_ACTOR): Promise<User> {
    passwordPolicy.assert(input.password)
    const passwordHash = await hash.make(input.password)
    let created: User
    try {
      created = await this.stamps.write(async ({ trx, stamp }) => {
        const user = new User()
        user.useTransaction(trx)
        user.merge({
          code: input.code.trim(),
          email: input.email ? normalizeEmail(input.email) : null,
          phone: input.phone ? normalizePhone(input.phone) : null,
          password: passwordHash,
          firstName: input.firstName ?? '',
          lastName: input.lastName ?? '',
          isAdmin: input.isAdmin ?? false,
          prefs: {},
          rights: input.isAdmin ? { admin: true } : {},
          colors: {},
          projectId: 0,
          sstamp: stamp,
          uimgStamp: 0,
        })
        await user.save()
        await this.audit.record(
          {
            actor: by,
            kind: 'user.created',
            target: this.auditTarget(user),
            changes: {
              code: { from: null, to: user.code },
              email: { from: null, to: user.email ?? null },
              phone: { from: null, to: user.phone ?? null },
              isAdmin: { from: null, to: user.isAdmin },
            },
          },
          trx
        )
        return user
      })
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw rpcError('CONFLICT', 'A user with this code, e-mail or phone already exists')
      }
      throw error
    }
    // Awaited: what listeners do for the new account (invitations waiting for it) is there when it answers.
    await emitter.emit('core:user_created', {
      userId: created.id,
      email: created.email ?? null,
      phone: created.phone ?? null,
    })
    return created
  }

  /** A page of users matching `search` (code, e-mail, phone or name), by id (the admin console). */
  async search(request: PageRequest) {
    const query = db.from('users')
    whereContains(query, request.search, ['code', 'email', 'phone', 'first_name', 'last_name'])
    const found = await readPage(
      query,
      request,
      (page) => page.orderBy('id').select('id'),
      (row) => Number(row.id)
    )
    const users = await User.query().whereIn('id', found.items).orderBy('id')
    return { ...found, items: users }
  }

  /** Profile fields and the administrator flag (the admin console; a user's code never changes). */
  async update(
    user: User,
    input: {
      email?: string | null
      phone?: string | null
      firstName?: string
      lastName?: string
      isAdmin?: boolean
    },
    by: AuditActor = SYSTEM_ACTOR
  ) {
    const profile = () => ({
      email: user.email ?? null,
      phone: user.phone ?? null,
      firstName: user.firstName,
      lastName: user.lastName,
      isAdmin: user.isAdmin,
    })
    try {
      await this.stamps.write(async ({ trx, stamp }) => {
        const before = profile()
        user.useTransaction(trx)
        if (input.email !== undefined) user.email = input.email ? normalizeEmail(input.email) : null
        if (input.phone !== undefined) user.phone = input.phone ? normalizePhone(input.phone) : null
        if (input.firstName !== undefined) user.firstName = input.firstName
        if (input.lastName !== undefined) user.lastName = input.lastName
        if (input.isAdmin !== undefined) {
          user.isAdmin = input.isAdmin
          user.rights = { ...user.rights, admin: input.isAdmin }
        }
        user.sstamp = stamp
        await user.save()
        const changes = diff(before, profile())
        if (Object.keys(changes).length > 0)
          await this.audit.record(
            { actor: by, kind: 'user.updated', target: this.auditTarget(user), changes },
            trx
          )
      })
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw rpcError('CONFLICT', 'A user with this code, e-mail or phone already exists')
      }
      throw error
    }
    return user
  }

  /** Sets a new password (the admin console's reset; the auth service's forced change has its own path). */
  async setPassword(user: User, password: string, by: AuditActor = SYSTEM_ACTOR) {
    passwordPolicy.assert(password)
    const passwordHash = await hash.make(password)
    await this.stamps.write(async ({ trx, stamp }) => {
      user.useTransaction(trx)
      user.password = passwordHash
      user.sstamp = stamp
      await user.save()
      await this.audit.record(
        {
          actor: by,
          kind: 'user.password_reset',
          target: this.auditTarget(user),
          changes: { password: CHANGED },
        },
        trx
      )
    })
  }

  /** How the audit log names a user it records a change of. */
  private auditTarget(user: Pick<User, 'id' | 'code'>) {
    return { type: 'user', id: user.id, label: user.code }
  }

  /** Disables or re-enables an account; a disabled one is refused by CredentialService everywhere. */
  async setDisabled(user: User, disabled: boolean, by: AuditActor = SYSTEM_ACTOR) {
    await this.stamps.write(async ({ trx, stamp }) => {
      const wasDisabled = user.disabledAt !== null && user.disabledAt !== undefined
      user.useTransaction(trx)
      user.disabledAt = disabled ? DateTime.now() : null
      user.sstamp = stamp
      await user.save()
      await this.audit.record(
        {
          actor: by,
          kind: disabled ? 'user.disabled' : 'user.enabled',
          target: this.auditTarget(user),
          changes: { disabled: { from: wasDisabled, to: disabled } },
        },
        trx
      )
    })
  }

  /** Turns password sign-in on api.php off or on (createOauthkey answers PASSWORD_SIGN_IN_DISABLED). */
  async setApiPasswordDisabled(user: User, disabled: boolean, by: AuditActor = SYSTEM_ACTOR) {
    await this.stamps.write(async ({ trx, stamp }) => {
      const before = Boolean(user.apiPasswordDisabled)
      user.useTransaction(trx)
      user.apiPasswordDisabled = disabled
      user.sstamp = stamp
      await user.save()
      await this.audit.record(
        {
          actor: by,
          kind: 'user.api_password_sign_in',
          target: this.auditTarget(user),
          changes: { apiPasswordSignInOff: { from: before, to: disabled } },
        },
        trx
      )
    })
  }

  /**
   * The users a user let act on their behalf, and those who let this user act
   * on theirs: searched by either user's code, paged in SQL (the console).
   */
  delegationsOf(userId: number, request: PageRequest) {
    const query = db
      .from('user_delegations as d')
      .join('users as u', 'u.id', 'd.user_id')
      .join('users as g', 'g.id', 'd.delegate_id')
      .where((scope) => scope.where('d.user_id', userId).orWhere('d.delegate_id', userId))
    return readPage(
      whereContains(query, request.search, ['u.code', 'g.code']),
      request,
      (page) =>
        page
          .orderBy('d.id')
          .select(
            'u.id as user_id',
            'u.code as user_code',
            'g.id as delegate_id',
            'g.code as delegate_code'
          ),
      (row) => ({
        userId: Number(row.user_id),
        userCode: row.user_code as string,
        delegateId: Number(row.delegate_id),
        delegateCode: row.delegate_code as string,
      })
    )
  }

  async revokeDelegation(userId: number, delegateId: number, by: AuditActor = SYSTEM_ACTOR) {
    await this.stamps.write(async ({ trx }) => {
      const removed = await trx
        .from('user_delegations')
        .where({ user_id: userId, delegate_id: delegateId })
        .delete()
      if (Number(removed) > 0)
        await this.recordDelegation(trx, by, 'delegation.revoked', userId, delegateId)
    })
  }

  /** A delegation's entry: its target is the user acted for, the change names the delegate. */
  private async recordDelegation(
    trx: TransactionClientContract,
    by: AuditActor,
    kind: string,
    userId: number,
    delegateId: number
  ) {
    // Read in the transaction: SQLite has one connection, which the transaction holds.
    const rows = await trx.from('users').whereIn('id', [userId, delegateId]).select('id', 'code')
    const codes = new Map(rows.map((row) => [Number(row.id), String(row.code)]))
    const delegate = codes.get(delegateId) ?? String(delegateId)
    await this.audit.record(
      {
        actor: by,
        kind,
        target: { type: 'user', id: userId, label: codes.get(userId) ?? String(userId) },
        changes: {
          actsOnBehalf:
            kind === 'delegation.granted'
              ? { from: null, to: delegate }
              : { from: delegate, to: null },
        },
      },
      trx
    )
  }

  /** A free user code derived from a login (createUserAccount). */
  async freeCodeFor(login: string): Promise<string> {
    const base =
      login
        .split('@')[0]
        .toLowerCase()
        .replace(/[^a-z0-9._-]/g, '')
        .slice(0, 40) || 'user'
    for (let suffix = 0; ; suffix++) {
      const candidate = suffix === 0 ? base : `${base}${suffix}`
      if (!(await User.findBy('code', candidate))) return candidate
    }
  }

  /** Whether `delegate` may act (read and write) on behalf of `user` (a chatbot, an integration). */
  async canActOnBehalf(delegateId: number, userId: number): Promise<boolean> {
    const row = await db
      .from('user_delegations')
      .where('delegate_id', delegateId)
      .where('user_id', userId)
      .first()
    return Boolean(row)
  }

  async grantDelegation(userId: number, delegateId: number, by: AuditActor = SYSTEM_ACTOR) {
    await this.stamps.write(async ({ trx }) => {
      const existing = await trx
        .from('user_delegations')
        .where({ user_id: userId, delegate_id: delegateId })
        .first()
      if (!existing) {
        await trx
          .table('user_delegations')
          .insert({ user_id: userId, delegate_id: delegateId, created_at: dbTimestamp() })
        await this.recordDelegation(trx, by, 'delegation.granted', userId, delegateId)
      }
    })
  }

  /**
   * The media plugin changed the user's profile image: uimgStamp (and the
   * user's sstamp) move to a new stamp, which /dbi/ui URLs carry.
   */
  async touchProfileImage(userId: number): Promise<number> {
    return this.stamps.write(async ({ trx, stamp }) => {
      await trx.from('users').where('id', userId).update({ uimg_stamp: stamp, sstamp: stamp })
      return stamp
    })
  }

  /** Called at each new session: feeds firstTime, lastConnection and secondsSincePreviousConnection. */
  async recordConnection(user: User) {
    await this.stamps.write(async ({ trx, stamp }) => {
      user.useTransaction(trx)
      user.previousConnectionAt = user.lastConnectionAt
      user.lastConnectionAt = DateTime.now()
      user.sstamp = stamp
      await user.save()
    })
  }
}
