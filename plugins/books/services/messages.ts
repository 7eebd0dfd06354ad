import app from '@adonisjs/core/services/app'
import type { MessageService } from './message_service.js'

/** The booted MessageService singleton (sendMsg and the socket's send message call it). */
let messages: MessageService

await app.booted(async () => {
  messages = await app.container.make('books.messages')
})

export { messages as default }
