import settings from '#core/settings/main'

/**
 * Whether the console requires TOTP of administrators: ADMIN_TOTP_REQUIRED
 * when set, else true in production and false elsewhere (so `npm start`'s
 * demo administrator signs in with its password alone in development, and
 * enrols at the first sign-in of a production deployment). The kernel's
 * setting `core.adminTotpRequired` declares that default.
 */
export function adminTotpRequired(setting: boolean | undefined, nodeEnv: string | undefined) {
  return setting ?? nodeEnv === 'production'
}

/** The console's settings, read through the settings service on every use (the Settings page changes them). */
export const consoleSettings = {
  get adminTotpRequired(): boolean {
    return settings.boolean('core.adminTotpRequired')
  },
}
