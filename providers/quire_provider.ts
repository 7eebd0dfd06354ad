import type { ApplicationService } from '@adonisjs/core/types'
import { StampService } from '#core/services/stamp_service'
import { UserService } from '#core/services/user_service'
import { AccessService } from '#core/services/access_service'
import { CredentialService } from '#core/services/credential_service'
import { Dispatcher } from '#core/rpc/dispatcher'
import { PluginRegistry } from '#core/plugins/plugin_registry'

/**
 * The kernel's services, as container singletons bound by class: operations,
 * handlers and other services receive them with `@inject()`. Each register
 * step is small; the plugin registry comes from PluginsProvider.
 */
export default class QuireProvider {
  /** Set once something asked for stamps: shutdown then has a heartbeat to stop. */
  private stamps: StampService | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    this.registerStamps()
    this.registerUsers()
    this.registerCredentials()
    this.registerAccess()
    this.registerDispatcher()
  }

  private registerStamps() {
    this.app.container.singleton(StampService, async (resolver) => {
      const { MemoryStampAllocator, RedisStampAllocator } =
        await import('#core/services/stamp_allocator')
      const { default: quireConfig } = await import('#config/quire')
      const db = await resolver.make('lucid.db')
      const logger = await resolver.make('logger')
      const redis = quireConfig.redisEnabled ? await resolver.make('redis') : null
      const allocator = redis
        ? new RedisStampAllocator(db, redis.connection())
        : new MemoryStampAllocator(db)
      this.stamps = new StampService(db, allocator, logger)
      return this.stamps
    })
  }

  async shutdown() {
    await this.stamps?.close()
  }

  private registerUsers() {
    this.app.container.singleton(UserService, async (resolver) => {
      return new UserService(await resolver.make(StampService), () => resolver.make(PluginRegistry))
    })
  }

  /** The one login + password check (createOauthkey, the auth service, the console's sign-in). */
  private registerCredentials() {
    this.app.container.singleton(CredentialService, async (resolver) => {
      const { default: quireConfig } = await import('#config/quire')
      return new CredentialService(
        await resolver.make(UserService),
        await resolver.make('hash'),
        await resolver.make('limiter.manager'),
        quireConfig.login
      )
    })
  }

  private registerAccess() {
    this.app.container.singleton(AccessService, async (resolver) => {
      const { default: quireConfig } = await import('#config/quire')
      return new AccessService(
        await resolver.make(StampService),
        await resolver.make(UserService),
        await resolver.make(CredentialService),
        {
          sessionIdleTtl: quireConfig.sessions.idleTtl,
          createUserAccount: quireConfig.createUserAccount,
        }
      )
    })
  }

  private registerDispatcher() {
    this.app.container.singleton(Dispatcher, async (resolver) => {
      const { default: quireConfig } = await import('#config/quire')
      return new Dispatcher(
        this.app,
        await resolver.make(PluginRegistry),
        await resolver.make(AccessService),
        await resolver.make(UserService),
        await resolver.make('logger'),
        quireConfig
      )
    })
  }
}
