import app from '@adonisjs/core/services/app'
import type { BookAccessService } from './services/book_access_service.js'
import type { BookCountersService } from './services/book_counters_service.js'
import type { BookService } from './services/book_service.js'
import type { EventService } from './services/event_service.js'
import type { MemberService } from './services/member_service.js'
import type { MessageService } from './services/message_service.js'
import type { SystemMessageService } from './services/system_message_service.js'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'books.access': BookAccessService
    'books.counters': BookCountersService
    'books.books': BookService
    'books.members': MemberService
    'books.events': EventService
    'books.messages': MessageService
    'books.system_messages': SystemMessageService
  }
}

/**
 * Container bindings of the books services. PluginsProvider calls boot()
 * during the application's boot phase, before `app.booted` hooks run, so the
 * importable singletons (services/book_access.ts, services/messages.ts, ...)
 * resolve these. Every step imports lazily.
 */
export default {
  boot() {
    registerAccess()
    registerCounters()
    registerBooks()
    registerMembers()
    registerMessages()
    registerSystemMessages()
  },

  async shutdown() {
    if (!app.container.hasBinding('books.counters')) return
    // Pending refreshes are not lost: readers count the tail and schedule them again.
    const counters = await app.container.make('books.counters')
    counters.stop()
  },
}

function registerAccess() {
  app.container.singleton('books.access', async () => {
    const { BookAccessService } = await import('./services/book_access_service.js')
    return new BookAccessService()
  })
}

function registerCounters() {
  app.container.singleton('books.counters', async (resolver) => {
    const { BookCountersService } = await import('./services/book_counters_service.js')
    const { default: booksConfig } = await import('./config.js')
    return new BookCountersService(
      await resolver.make('quire.stamps'),
      await resolver.make('logger'),
      booksConfig.counterRefreshMs
    )
  })
}

function registerBooks() {
  app.container.singleton('books.books', async (resolver) => {
    const { BookService } = await import('./services/book_service.js')
    return new BookService(
      await resolver.make('quire.stamps'),
      await resolver.make('books.access'),
      await resolver.make('books.counters')
    )
  })
}

function registerMembers() {
  app.container.singleton('books.members', async (resolver) => {
    const { MemberService } = await import('./services/member_service.js')
    return new MemberService(
      await resolver.make('quire.stamps'),
      await resolver.make('books.access'),
      await resolver.make('quire.users')
    )
  })
}

function registerMessages() {
  app.container.singleton('books.events', async () => {
    const { EventService } = await import('./services/event_service.js')
    return new EventService()
  })
  app.container.singleton('books.messages', async (resolver) => {
    const { MessageService } = await import('./services/message_service.js')
    return new MessageService(
      await resolver.make('quire.stamps'),
      await resolver.make('books.access'),
      await resolver.make('books.counters'),
      await resolver.make('books.events')
    )
  })
}

function registerSystemMessages() {
  app.container.singleton('books.system_messages', async (resolver) => {
    const { SystemMessageService } = await import('./services/system_message_service.js')
    return new SystemMessageService(
      await resolver.make('quire.stamps'),
      await resolver.make('books.access'),
      await resolver.make('books.books'),
      await resolver.make('books.members'),
      await resolver.make('books.messages')
    )
  })
}
