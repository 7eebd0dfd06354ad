import app from '@adonisjs/core/services/app'
import type { StampService } from '#core/services/stamp_service'

/** The booted StampService singleton. */
let stamps: StampService

await app.booted(async () => {
  stamps = await app.container.make('quire.stamps')
})

export { stamps as default }
