import type { ApplicationService } from '@adonisjs/core/types'
import type { StampService } from '#core/services/stamp_service'
import type { UserService } from '#core/services/user_service'
import type { AccessService } from '#core/services/access_service'
import type { Dispatcher } from '#core/rpc/dispatcher'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'quire.stamps': StampService
    'quire.users': UserService
    'quire.access': AccessService
    'quire.dispatcher': Dispatcher
  }
}

/**
 * The kernel's services, as container singletons. Each register step is
 * small and imports lazily; the plugin registry comes from PluginsProvider.
 */
export default class QuireProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.registerStamps()
    this.registerUsers()
    this.registerAccess()
    this.registerDispatcher()
  }

  private registerStamps() {
    this.app.container.singleton('quire.stamps', async (resolver) => {
      const { StampService } = await import('#core/services/stamp_service')
      const { MemoryStampAllocator, RedisStampAllocator } =
        await import('#core/services/stamp_allocator')
      const { default: quireConfig } = await import('#config/quire')
      const db = await resolver.make('lucid.db')
      const logger = await resolver.make('logger')
      const redis = quireConfig.redisEnabled ? await resolver.make('redis') : null
      const allocator = redis
        ? new RedisStampAllocator(db, redis.connection())
        : new MemoryStampAllocator(db)
      return new StampService(db, allocator, logger)
    })
  }

  private registerUsers() {
    this.app.container.singleton('quire.users', async (resolver) => {
      const { UserService } = await import('#core/services/user_service')
      return new UserService(await resolver.make('quire.stamps'), () =>
        resolver.make('quire.plugins')
      )
    })
  }

  private registerAccess() {
    this.app.container.singleton('quire.access', async (resolver) => {
      const { AccessService } = await import('#core/services/access_service')
      const { default: quireConfig } = await import('#config/quire')
      return new AccessService(
        await resolver.make('quire.stamps'),
        await resolver.make('quire.users'),
        await resolver.make('limiter.manager'),
        {
          sessionIdleTtl: quireConfig.sessions.idleTtl,
          login: quireConfig.login,
          createUserAccount: quireConfig.createUserAccount,
        }
      )
    })
  }

  private registerDispatcher() {
    this.app.container.singleton('quire.dispatcher', async (resolver) => {
      const { Dispatcher } = await import('#core/rpc/dispatcher')
      const { default: quireConfig } = await import('#config/quire')
      return new Dispatcher(
        this.app,
        await resolver.make('quire.plugins'),
        await resolver.make('quire.access'),
        await resolver.make('quire.users'),
        await resolver.make('logger'),
        quireConfig
      )
    })
  }
}
