import app from '@adonisjs/core/services/app'
import type { SystemMessageService } from './system_message_service.js'

/** The booted SystemMessageService singleton (the socket's system messages). */
let systemMessages: SystemMessageService

await app.booted(async () => {
  systemMessages = await app.container.make('books.system_messages')
})

export { systemMessages as default }
