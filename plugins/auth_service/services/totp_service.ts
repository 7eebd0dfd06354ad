import { generateSecret, generateURI, verify } from 'otplib'
import { inject } from '@adonisjs/core'
import { Database } from '@adonisjs/lucid/database'
import { Clock } from './clock.js'
import { SecretBox } from './secrets.js'
import { AuthConfig } from '../config.js'

/** Codes from one step before or after the current one are accepted (clock drift of the device). */
const TOLERANCE_SECONDS = 30

/**
 * TOTP (RFC 6238, 6 digits, 30 s, SHA-1: what authenticator apps expect).
 * Secrets are sealed at rest; a code is accepted at most once, and never a
 * code older than the last one accepted (the accepted time step is recorded
 * with a conditional update, so two concurrent uses of one code cannot both
 * pass).
 */
@inject()
export class TotpService {
  private issuer: string

  constructor(
    private db: Database,
    private clock: Clock,
    private box: SecretBox,
    config: AuthConfig
  ) {
    this.issuer = config.issuer
  }

  newSecret(): string {
    return generateSecret()
  }

  uri(secret: string, label: string): string {
    return generateURI({ issuer: this.issuer, label, secret })
  }

  seal(secret: string): string {
    return this.box.seal(secret)
  }

  open(sealed: string): string {
    return this.box.open(sealed)
  }

  /** The time step a valid code belongs to, or null. `afterStep` refuses that step and earlier ones. */
  async check(secret: string, code: string, afterStep: number | null): Promise<number | null> {
    if (!/^\d{6}$/.test(code)) return null
    const result = await verify({
      secret,
      token: code,
      epoch: this.clock.nowSeconds(),
      epochTolerance: TOLERANCE_SECONDS,
      ...(afterStep !== null ? { afterTimeStep: afterStep } : {}),
    })
    // The default strategy is TOTP, whose result carries the matched time step.
    return result.valid ? (result as { timeStep: number }).timeStep : null
  }

  /**
   * Records `step` as the user's last accepted one; false when a concurrent
   * request already used this step or a later one (the code is a replay).
   */
  async consumeStep(userId: number, step: number): Promise<boolean> {
    const updated = await this.db
      .from('auth_users')
      .where('user_id', userId)
      .where((query) => query.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
      .update({ totp_last_step: step, updated_at: this.clock.now() })
    return Number(updated) === 1
  }
}
