import app from '@adonisjs/core/services/app'
import type { Dispatcher } from '#core/rpc/dispatcher'

let dispatcher: Dispatcher

await app.booted(async () => {
  dispatcher = await app.container.make('quire.dispatcher')
})

export { dispatcher as default }
