import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { StampService } from '#core/services/stamp_service'
import User from '#models/user'
import { TABLES, nowSeconds } from '../models/records.js'
import { OWNER_PREF_KINDS, USER_PREF_KINDS, coercePref } from '../models/prefs.js'
import { BookService } from './book_service.js'
import { MemberService } from './member_service.js'
import { BookAccessService } from './book_access_service.js'
import { BookCountersService } from './book_counters_service.js'

/** The fields of a socket system message (type 11). */
export interface SystemMessageInput {
  b_o?: string
  b_c?: string
  param?: string
  value?: unknown
}

/**
 * userPrefs keys a client may change with updateUserInfo (2.3). mail1 and mob1
 * are logins, and the dates are the server's: those are refused.
 */
const USER_INFO_KINDS: Record<string, 'string' | 'boolean' | 'integer'> = {
  fname: 'string',
  lname: 'string',
  sex: 'string',
  country: 'string',
  lang: 'string',
  birthd: 'string',
  mail2: 'string',
  mob2: 'string',
  address: 'string',
  zip: 'string',
  city: 'string',
  cie: 'string',
  vatn: 'string',
  account: 'string',
  slashd: 'boolean',
  regiondf: 'string',
  sdate: 'string',
  method: 'string',
  openGrand: 'boolean',
  NotifMobile: 'string',
  nbCol: 'integer',
  tz: 'string',
  syncWithStorage: 'boolean',
}

const need = (value: string | undefined, name: string) => {
  const text = value?.trim() ?? ''
  if (text === '') throw rpcError('MISSING_PARAMETER', `Missing parameter: ${name}`)
  return text
}

/**
 * The effects of the socket's system messages (spec part 6, "System
 * message"): one method per message, called by its handler in socket/, which
 * then broadcasts the receive-system-message to the other concerned clients.
 */
@inject()
export class SystemMessageService {
  constructor(
    private stamps: StampService,
    private access: BookAccessService,
    private books: BookService,
    private members: MemberService,
    private counters: BookCountersService
  ) {}

  async acceptInvitation(actor: Actor, input: SystemMessageInput) {
    const result = await this.members.accept(actor, need(input.b_o, 'b_o'), need(input.b_c, 'b_c'))
    return { book: result.book }
  }

  /** Clears the unread count: the member has read the book up to its newest message. */
  async clearNotRead(actor: Actor, input: SystemMessageInput) {
    const book = await this.access.resolveFor(
      actor,
      need(input.b_o, 'b_o'),
      need(input.b_c, 'b_c'),
      'read'
    )
    await this.counters.markRead(actor, book)
    return { book }
  }

  /** Records when the member last opened the book (not synced data: no stamp). */
  async logOpenBook(actor: Actor, input: SystemMessageInput) {
    const { book, member } = await this.books.membershipFor(
      actor,
      need(input.b_o, 'b_o'),
      need(input.b_c, 'b_c')
    )
    await db.from(TABLES.members).where('id', member.id).update({ last_open_at: nowSeconds() })
    return { book }
  }

  /**
   * A book parameter: one of the member's userPrefs, favorite or order; or,
   * for an administrator, an ownerPrefs key (title, covers, ...) or description.
   */
  async updateBookParam(actor: Actor, input: SystemMessageInput) {
    const owner = need(input.b_o, 'b_o')
    const code = need(input.b_c, 'b_c')
    const param = need(input.param, 'param')
    const value = input.value
    if (param === 'favorite' || param === 'order') {
      const typed = coercePref(param === 'favorite' ? 'boolean' : 'integer', value)
      if (typed === undefined)
        throw rpcError('INVALID_PARAMETER', `Invalid parameter value for ${param}`, {
          field: 'value',
        })
      return { book: await this.books.updateUserPrefs(actor, owner, code, { [param]: typed }) }
    }
    if (param in USER_PREF_KINDS || param === 'syncWithHubic') {
      return {
        book: await this.books.updateUserPrefs(actor, owner, code, {
          userPrefs: { [param]: value },
        }),
      }
    }
    if (param in OWNER_PREF_KINDS) {
      return {
        book: await this.books.update(actor, owner, code, { ownerPrefs: { [param]: value } }),
      }
    }
    if (param === 'description') {
      return {
        book: await this.books.update(actor, owner, code, { description: String(value ?? '') }),
      }
    }
    throw rpcError(
      'INVALID_PARAMETER',
      `Invalid parameter param: ${param} is not a book parameter`,
      { field: 'param' }
    )
  }

  /** A user-info parameter (userPrefs of 2.3); fname and lname are the user's names. */
  async updateUserInfo(actor: Actor, input: SystemMessageInput) {
    const rawParam = need(input.param, 'param')
    const param = rawParam === 'syncWithHubic' ? 'syncWithStorage' : rawParam
    const kind = USER_INFO_KINDS[param]
    if (!kind)
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter param: ${rawParam} cannot be changed`,
        { field: 'param' }
      )
    const value = coercePref(kind, input.value)
    if (value === undefined)
      throw rpcError('INVALID_PARAMETER', `Invalid parameter value for ${rawParam}`, {
        field: 'value',
      })
    if (typeof value === 'string' && value.length > 191) {
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter value: at most 191 characters', {
        field: 'value',
      })
    }
    await this.stamps.write(async ({ trx, stamp }) => {
      const user = await User.query({ client: trx })
        .where('id', actor.user.id)
        .forUpdate()
        .firstOrFail()
      if (param === 'fname') user.firstName = value as string
      else if (param === 'lname') user.lastName = value as string
      else user.prefs = { ...user.prefs, [param]: value }
      user.sstamp = stamp
      await user.save()
      actor.user.merge({
        firstName: user.firstName,
        lastName: user.lastName,
        prefs: user.prefs,
        sstamp: user.sstamp,
      })
    })
    return { param: rawParam, value }
  }
}
