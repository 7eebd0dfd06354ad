import env from '#start/env'
import type { SettingDeclaration } from './types.js'

/** The kernel's own settings, declared like a plugin's (owner `core`). */
export const kernelSettings: SettingDeclaration[] = [
  {
    key: 'adminTotpRequired',
    label: 'Two-factor sign-in required for administrators',
    help: 'The admin console asks every administrator for an authenticator code (enrolment at the first sign-in), whatever the per-user policy says. On by default in production.',
    type: 'boolean',
    // ADMIN_TOTP_REQUIRED's meaning: unset, true in production only.
    default: env.get('NODE_ENV') === 'production',
    env: 'ADMIN_TOTP_REQUIRED',
    runtime: true,
  },
]
