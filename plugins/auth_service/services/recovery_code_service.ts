import { createHmac, randomInt } from 'node:crypto'
import { inject } from '@adonisjs/core'
import { Database } from '@adonisjs/lucid/database'
import { Clock } from './clock.js'
import { deriveKey } from '../config.js'

/** How many codes an enrolment (or a regeneration) gives. */
export const RECOVERY_CODE_COUNT = 10
/** Base32 without the look-alikes people misread on paper (0/o, 1/l/i): 31 letters and digits. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
/** Two groups of five: about 49 bits each, tried online only, through the TOTP throttle. */
const GROUP = 5

/** A recovery code as people type it: letters and digits, spaces and dashes ignored, any case. */
const RECOVERY_CODE = '[a-z2-9]{5}[\\s-]?[a-z2-9]{5}'
export const RECOVERY_CODE_PATTERN = new RegExp(`^${RECOVERY_CODE}$`, 'i')
/** A sign-in's second factor (not an enrolment's): a 6-digit TOTP code, or a recovery code. */
export const SIGN_IN_CODE_PATTERN = new RegExp(`^(\\d{6}|${RECOVERY_CODE})$`, 'i')

export const looksLikeRecoveryCode = (code: string) => RECOVERY_CODE_PATTERN.test(code.trim())

/**
 * One-time recovery codes: given in clear once (at enrolment, at
 * regeneration), stored as an HMAC keyed from APP_KEY, each accepted once in
 * place of a TOTP code. Regenerating replaces every code; resetting the
 * second factor forgets them.
 */
@inject()
export class RecoveryCodeService {
  private key = deriveKey('recovery-codes')

  constructor(
    private db: Database,
    private clock: Clock
  ) {}

  private normalize(code: string) {
    return code.toLowerCase().replace(/[\s-]/g, '')
  }

  private hashOf(code: string) {
    return createHmac('sha256', this.key).update(this.normalize(code)).digest('hex')
  }

  private newCode() {
    let code = ''
    for (let index = 0; index < GROUP * 2; index++) code += ALPHABET[randomInt(ALPHABET.length)]
    return `${code.slice(0, GROUP)}-${code.slice(GROUP)}`
  }

  /** Ten new codes for the user (the old ones stop working), answered in clear this once. */
  async regenerate(userId: number): Promise<string[]> {
    const codes = new Set<string>()
    while (codes.size < RECOVERY_CODE_COUNT) codes.add(this.newCode())
    const now = this.clock.now()
    await this.db.transaction(async (trx) => {
      await trx.from('auth_recovery_codes').where('user_id', userId).delete()
      await trx.table('auth_recovery_codes').multiInsert(
        [...codes].map((code) => ({
          user_id: userId,
          code_hash: this.hashOf(code),
          created_at: now,
        }))
      )
    })
    return [...codes]
  }

  /** Uses a code: true once per code (a conditional update, so two concurrent uses cannot both pass). */
  async consume(userId: number, code: string): Promise<boolean> {
    if (!looksLikeRecoveryCode(code)) return false
    const updated = await this.db
      .from('auth_recovery_codes')
      .where('user_id', userId)
      .where('code_hash', this.hashOf(code))
      .whereNull('used_at')
      .update({ used_at: this.clock.now() })
    return Number(updated) === 1
  }

  /** Codes not used yet. */
  async remaining(userId: number): Promise<number> {
    const row = await this.db
      .from('auth_recovery_codes')
      .where('user_id', userId)
      .whereNull('used_at')
      .count('* as total')
      .first()
    return Number(row?.total ?? 0)
  }

  async forget(userId: number) {
    await this.db.from('auth_recovery_codes').where('user_id', userId).delete()
  }
}
