import app from '@adonisjs/core/services/app'
import type { UserService } from '#core/services/user_service'

/** The booted UserService singleton. */
let users: UserService

await app.booted(async () => {
  users = await app.container.make('quire.users')
})

export { users as default }
