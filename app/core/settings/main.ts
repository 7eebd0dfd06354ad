import type { SettingsService } from './settings_service.js'

let settings: SettingsService

/**
 * The application's SettingsService, set at boot by SettingsProvider (an ES
 * live binding, like @adonisjs/core/services/app): services read a setting
 * with `settings.integer('webhooks.timeoutMs')` on every use.
 */
export function setSettingsService(service: SettingsService) {
  settings = service
}

export { settings as default }
