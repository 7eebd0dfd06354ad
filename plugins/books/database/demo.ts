import app from '@adonisjs/core/services/app'
import type { Actor } from '#core/rpc/base_operation'
import { NO_RESTRICTIONS } from '#models/api_session'
import type ApiSession from '#models/api_session'
import type User from '#models/user'
import { UserService } from '#core/services/user_service'
import { passwordPolicy } from '#core/services/password_policy'
import { BookService } from '../services/book_service.js'
import { MemberService } from '../services/member_service.js'
import { MessageService } from '../services/message_service.js'
import { RIGHT_READWRITEDELETE } from '../rights.js'

/** The services act for an actor; demo data is written as the users themselves, outside any session. */
const actorFor = (user: User): Actor => ({
  user,
  principal: user,
  session: null as unknown as ApiSession,
  restrictions: { ...NO_RESTRICTIONS },
  onBehalf: false,
})

/**
 * Demo data for `npm start` on a fresh install: a second user, Camille,
 * shares the book "welcome" with the admin, with a short conversation and a
 * calendar event. Runs once, when quire:setup creates the demo admin.
 */
export default async function seedBooksDemo({ adminId }: { adminId: number }) {
  const [users, books, members, messages] = await Promise.all([
    app.container.make(UserService),
    app.container.make(BookService),
    app.container.make(MemberService),
    app.container.make(MessageService),
  ])
  const admin = await users.findById(adminId)
  if (!admin) return
  const camille =
    (await users.findByCode('camille')) ??
    (await users.create({
      code: 'camille',
      email: 'camille@quire.local',
      password: passwordPolicy.generate(),
      firstName: 'Camille',
      lastName: 'Martin',
    }))

  const asAdmin = actorFor(admin)
  const asCamille = actorFor(camille)
  const book = await books.create(asAdmin, {
    b_c: 'welcome',
    title: 'Welcome to Quire',
    description: 'A book shared by the demo administrator and Camille',
  })
  await members.invite(asAdmin, book.b_o, book.b_c, camille.code, RIGHT_READWRITEDELETE)
  await members.accept(asCamille, book.b_o, book.b_c)

  const target = { b_o: book.b_o, b_c: book.b_c }
  await messages.send(asAdmin, { ...target, msg: 'Hello Camille, this is our shared book.' })
  await messages.send(asCamille, {
    ...target,
    msg: 'Hi! Messages, members and events all live here.',
  })
  const tomorrow = new Date()
  tomorrow.setUTCDate(tomorrow.getUTCDate() + 1)
  tomorrow.setUTCHours(9, 0, 0, 0)
  const start = Math.floor(tomorrow.getTime() / 1000)
  await messages.send(asAdmin, {
    ...target,
    msg: 'Kick-off meeting tomorrow at 9:00 UTC',
    event: {
      eventStart: start,
      eventEnd: start + 3600,
      eventTimezone: 'UTC',
      eventAllDay: false,
      isBusy: true,
      eventParticipants: [{ id: admin.id }, { id: camille.id }],
      reminderData: { email: false, sms: false, alarmMobile: true, time: 900, remindermember: 1 },
    },
  })
  await messages.send(asCamille, { ...target, msg: 'See you there.' })

  await books.create(asAdmin, { b_c: 'notes', title: 'My notes' })
  await messages.send(asAdmin, {
    b_o: admin.code,
    b_c: 'notes',
    msg: 'A private book: only you can read it.',
  })
}
