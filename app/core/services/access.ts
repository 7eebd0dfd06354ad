import app from '@adonisjs/core/services/app'
import type { AccessService } from '#core/services/access_service'

/** The booted AccessService singleton. */
let access: AccessService

await app.booted(async () => {
  access = await app.container.make('quire.access')
})

export { access as default }
