import type { ApplicationService } from '@adonisjs/core/types'
import { UserService } from '#core/services/user_service'
import { bindSingletons } from '#core/container/bind_singletons'
import { StampService } from '#core/services/stamp_service'
import booksConfig from './config.js'
import { AddressInvitationService } from './services/address_invitation_service.js'
import { BookAccessService } from './services/book_access_service.js'
import { BookCountersService } from './services/book_counters_service.js'
import { BookService } from './services/book_service.js'
import { EventService } from './services/event_service.js'
import { MemberService } from './services/member_service.js'
import { MessageAttachmentsService } from './services/message_attachments_service.js'
import { MessageQueries } from './services/message_queries.js'
import { MessageService } from './services/message_service.js'
import { MessageTransfer } from './services/message_transfer.js'
import { MessageWriter } from './services/message_writer.js'
import { SystemMessageService } from './services/system_message_service.js'

/**
 * The books services, as container singletons bound by class: operations,
 * socket handlers and other services receive them with `@inject()`. The
 * counters service takes a config value, so it has its own factory; every
 * other service is built once from its `@inject()` constructor.
 */
export default class BooksProvider {
  /** Set once something asked for the counters: shutdown then has timers to clear. */
  private counters: BookCountersService | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    this.registerCounters()
    bindSingletons(this.app.container, [
      AddressInvitationService,
      BookAccessService,
      BookService,
      MemberService,
      EventService,
      MessageWriter,
      MessageQueries,
      MessageTransfer,
      MessageService,
      MessageAttachmentsService,
      SystemMessageService,
    ])
  }

  private registerCounters() {
    this.app.container.singleton(BookCountersService, async (resolver) => {
      this.counters = new BookCountersService(
        await resolver.make(StampService),
        await resolver.make('logger'),
        booksConfig.counterRefreshMs
      )
      return this.counters
    })
  }

  /** A new account receives the invitations sent to its e-mail or phone before it existed. */
  async boot() {
    const emitter = await this.app.container.make('emitter')
    emitter.on('core:user_created', async (created) => {
      try {
        const users = await this.app.container.make(UserService)
        const user = await users.findById(created.userId)
        if (!user) return
        const members = await this.app.container.make(MemberService)
        await members.adoptAddressInvitations(user)
      } catch (error) {
        // The account exists: its invitations by address stay pending (they expire) rather than fail it.
        const logger = await this.app.container.make('logger')
        logger.error(
          { err: error, userId: created.userId },
          'books: adopting address invitations failed'
        )
      }
    })
  }

  async shutdown() {
    // Pending refreshes are not lost: readers count the tail and schedule them again.
    this.counters?.stop()
  }
}
