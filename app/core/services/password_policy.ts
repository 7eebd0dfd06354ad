import { randomBytes } from 'node:crypto'
import env from '#start/env'
import { rpcError } from '#core/rpc/errors'

export interface PasswordRules {
  /** AUTH_PASSWORD_MIN_LENGTH (default 8). */
  minLength: number
  /** Longer passwords are refused (hashing cost is bounded). */
  maxLength: number
}

/** What a new password is checked against when the rules are not given (also the answer's wording). */
export const DEFAULT_MAX_LENGTH = 128

/**
 * The one password policy. Every place that sets a password asks it: the
 * console's create-user and reset forms, `node ace user:create`, the auth
 * service's forced password change and its `authenticationPolicies`,
 * createOauthkey's createUserAccount, and UserService.create/setPassword
 * themselves (so a new entry point cannot skip it). quire:setup's demo
 * administrator gets a generated password that meets it.
 */
export class PasswordPolicy {
  constructor(public rules: PasswordRules) {}

  /** The problems of a new password, worded for a person; none when it is acceptable. */
  problems(password: string): string[] {
    const problems: string[] = []
    if (password.length < this.rules.minLength)
      problems.push(`The password must have at least ${this.rules.minLength} characters`)
    if (password.length > this.rules.maxLength)
      problems.push(`The password must have at most ${this.rules.maxLength} characters`)
    return problems
  }

  /** Throws INVALID_PARAMETER (naming `field`) when the password does not meet the policy. */
  assert(password: string, field = 'password') {
    const [problem] = this.problems(password)
    if (problem) throw rpcError('INVALID_PARAMETER', problem, { field })
  }

  /** A random password that meets the policy (demo accounts): at least 16 characters. */
  generate(): string {
    const length = Math.min(this.rules.maxLength, Math.max(16, this.rules.minLength))
    return randomBytes(length).toString('base64url').slice(0, length)
  }
}

/**
 * One instance per process, read from the environment. A module value rather
 * than a container binding: UserService (built by the kernel's provider with
 * its own arguments) and the ace commands ask it too. Tests change `rules` to
 * check each entry point against another minimum.
 */
export const passwordPolicy = new PasswordPolicy({
  minLength: Math.max(1, env.get('AUTH_PASSWORD_MIN_LENGTH', 8)),
  maxLength: DEFAULT_MAX_LENGTH,
})
