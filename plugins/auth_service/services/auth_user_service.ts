import { randomUUID } from 'node:crypto'
import { inject } from '@adonisjs/core'
import { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type User from '#models/user'
import { UserService } from '#core/services/user_service'
import { AuditLog, SYSTEM_ACTOR, CHANGED, type AuditActor } from '#core/audit/audit_log'
import { Clock } from './clock.js'
import { RecoveryCodeService } from './recovery_code_service.js'
import { AuthConfig } from '../config.js'

export type TotpPolicy = 'optional' | 'required'

export interface AuthUserRow {
  user_id: number
  uuid: string
  totp_secret: string | null
  totp_enabled_at: number | null
  totp_last_step: number | null
  totp_policy: TotpPolicy | null
  must_change_password: boolean
}

/** A user's own policy wins; without one, the global policy (AUTH_TOTP_POLICY) applies. */
export function effectiveTotpPolicy(
  userPolicy: TotpPolicy | null,
  globalPolicy: TotpPolicy
): TotpPolicy {
  return userPolicy ?? globalPolicy
}

const isUniqueViolation = (error: any) =>
  error?.code === 'ER_DUP_ENTRY' ||
  error?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
  error?.code === 'SQLITE_CONSTRAINT_UNIQUE'

/**
 * The auth service's own facts about a kernel user (the kernel's users table
 * stays untouched): the public uuid answered as `user.id`, the TOTP
 * enrolment, the per-user TOTP policy and the forced password change.
 */
@inject()
export class AuthUserService {
  private globalPolicy: TotpPolicy

  constructor(
    private db: Database,
    private clock: Clock,
    private recovery: RecoveryCodeService,
    private users: UserService,
    config: AuthConfig,
    private audit: AuditLog
  ) {
    this.globalPolicy = config.totp.policy
  }

  async find(userId: number): Promise<AuthUserRow | null> {
    const row = await this.db.from('auth_users').where('user_id', userId).first()
    return row ? this.normalize(row) : null
  }

  /** The row of a user, created on first use (two concurrent first logins get the same row). */
  async ensure(user: Pick<User, 'id'>): Promise<AuthUserRow> {
    const existing = await this.find(user.id)
    if (existing) return existing
    const now = this.clock.now()
    try {
      await this.db.table('auth_users').insert({
        user_id: user.id,
        uuid: randomUUID(),
        must_change_password: false,
        created_at: now,
        updated_at: now,
      })
    } catch (error) {
      if (!isUniqueViolation(error)) throw error
    }
    return (await this.find(user.id))!
  }

  async findByUuid(uuid: string): Promise<AuthUserRow | null> {
    const row = await this.db.from('auth_users').where('uuid', uuid).first()
    return row ? this.normalize(row) : null
  }

  /** TOTP is required when the user's own policy says so, or when it has none and the global one does. */
  requiresTotp(row: AuthUserRow): boolean {
    return effectiveTotpPolicy(row.totp_policy, this.globalPolicy) === 'required'
  }

  isEnrolled(row: AuthUserRow): boolean {
    return Boolean(row.totp_secret && row.totp_enabled_at)
  }

  /** `by`: the administrator who sets it, for the audit log. */
  async setPolicy(
    user: Pick<User, 'id' | 'code'>,
    policy: TotpPolicy | null,
    by: AuditActor = SYSTEM_ACTOR
  ) {
    const before = await this.ensure(user)
    await this.db.transaction(async (trx) => {
      await this.update(user.id, { totp_policy: policy }, trx)
      await this.audit.record(
        {
          actor: by,
          kind: 'user.two_factor_policy',
          target: { type: 'user', id: user.id, label: user.code },
          changes: {
            twoFactorPolicy: { from: before.totp_policy ?? 'default', to: policy ?? 'default' },
          },
        },
        trx
      )
    })
  }

  async setMustChangePassword(user: Pick<User, 'id'>, value: boolean) {
    await this.ensure(user)
    await this.update(user.id, { must_change_password: value })
  }

  /** Forgets the user's second factor and its recovery codes (lost device); with policy required, the next login enrols again. */
  async resetTotp(user: Pick<User, 'id' | 'code'>, by: AuditActor = SYSTEM_ACTOR) {
    await this.ensure(user)
    await this.db.transaction(async (trx) => {
      await this.update(
        user.id,
        { totp_secret: null, totp_enabled_at: null, totp_last_step: null },
        trx
      )
      await this.audit.record(
        {
          actor: by,
          kind: 'user.two_factor_reset',
          target: { type: 'user', id: user.id, label: user.code },
          changes: { twoFactor: CHANGED },
        },
        trx
      )
    })
    await this.recovery.forget(user.id)
  }

  /**
   * Ten new recovery codes (the old ones stop working), answered in clear this
   * once; null when the user has no second factor to recover.
   */
  async regenerateRecoveryCodes(user: Pick<User, 'id'>): Promise<string[] | null> {
    if (!this.isEnrolled(await this.ensure(user))) return null
    return this.recovery.regenerate(user.id)
  }

  /**
   * Password sign-in on api.php, off or on. Off only with TOTP set up, so the
   * user keeps a way in that is more than a password; false when refused.
   */
  async setApiPasswordDisabled(user: User, disabled: boolean): Promise<boolean> {
    if (disabled && !this.isEnrolled(await this.ensure(user))) return false
    await this.users.setApiPasswordDisabled(user, disabled)
    return true
  }

  async update(userId: number, values: Record<string, unknown>, client?: QueryClientContract) {
    await (client ?? this.db)
      .from('auth_users')
      .where('user_id', userId)
      .update({ ...values, updated_at: this.clock.now() })
  }

  private normalize(row: any): AuthUserRow {
    return {
      user_id: Number(row.user_id),
      uuid: row.uuid,
      totp_secret: row.totp_secret ?? null,
      totp_enabled_at: row.totp_enabled_at === null ? null : Number(row.totp_enabled_at),
      totp_last_step: row.totp_last_step === null ? null : Number(row.totp_last_step),
      totp_policy: row.totp_policy ?? null,
      must_change_password: Boolean(row.must_change_password),
    }
  }
}
