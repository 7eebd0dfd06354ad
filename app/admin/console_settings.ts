import env from '#start/env'

/**
 * Whether the console requires TOTP of administrators: ADMIN_TOTP_REQUIRED
 * when set, else true in production and false elsewhere (so `npm start`'s
 * demo administrator signs in with its password alone in development, and
 * enrols at the first sign-in of a production deployment).
 */
export function adminTotpRequired(setting: boolean | undefined, nodeEnv: string | undefined) {
  return setting ?? nodeEnv === 'production'
}

/** The console's settings, read once. Tests change them to walk the other path. */
export const consoleSettings = {
  adminTotpRequired: adminTotpRequired(env.get('ADMIN_TOTP_REQUIRED'), env.get('NODE_ENV')),
}
