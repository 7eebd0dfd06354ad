import app from '@adonisjs/core/services/app'
import type { AuthServices } from './auth_services.js'

/** The booted services of the auth plugin (wired by its provider). */
let auth: AuthServices

await app.booted(async () => {
  auth = await app.container.make('auth_service.services')
})

export { auth as default }
