import app from '@adonisjs/core/services/app'
import type { MemberService } from './member_service.js'

/** The booted MemberService singleton. */
let members: MemberService

await app.booted(async () => {
  members = await app.container.make('books.members')
})

export { members as default }
