import type { ApplicationService } from '@adonisjs/core/types'
import { StampService } from '#core/services/stamp_service'
import { UserService } from '#core/services/user_service'
import { AccessService } from '#core/services/access_service'
import { CredentialService } from '#core/services/credential_service'
import { Dispatcher } from '#core/rpc/dispatcher'
import { GatewayAuth } from '#core/auth/gateway_auth'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { OutboxService } from '#core/outbox/outbox_service'
import { DetachedSender } from '#core/outbox/detached_sender'
import { InstanceRegistry, type ReportStore } from '#core/health/instances'
import { ERRORS_KEPT, shareErrors } from '#core/health/error_log'
import { AuditLog } from '#core/audit/audit_log'

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
    this.registerAudit()
    this.registerUsers()
    this.registerCredentials()
    this.registerAccess()
    this.registerGatewayAuth()
    this.registerDispatcher()
    this.registerOutbox()
    this.registerInstances()
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

  /** The audit log of administrative changes (docs/audit.md); pruned hourly by serving processes. */
  private auditPrune: NodeJS.Timeout | null = null

  private registerAudit() {
    this.app.container.singleton(AuditLog, async (resolver) => {
      const { default: env } = await import('#start/env')
      return new AuditLog(await resolver.make('lucid.db'), {
        retentionDays: env.get('AUDIT_RETENTION_DAYS', 365),
      })
    })
  }

  private async startAuditPrune() {
    const audit = await this.app.container.make(AuditLog)
    const logger = await this.app.container.make('logger')
    const prune = () => audit.prune().catch((error) => logger.warn({ err: error }, 'audit prune'))
    // Hourly, the first an hour after the start (a fresh test database has no table yet at boot).
    this.auditPrune = setInterval(prune, 3_600_000)
    this.auditPrune.unref()
  }

  async shutdown() {
    if (this.auditPrune) clearInterval(this.auditPrune)
    this.outbox?.stopSweeper()
    // Claims nothing more and waits for the sends in flight (here, or handed over to the sender,
    // which may go then). A pump left running went on claiming and writing attempts after the
    // providers' shutdown, and the database's close waited for it: the process never exited.
    await this.outbox?.pump.stop(8_000)
    await this.sender?.stop()
    await this.instances?.stop()
    await this.stamps?.close()
  }

  /** This instance's vital signs, and with Redis every instance's (the console's Health page). */
  private instances: InstanceRegistry | null = null

  private registerInstances() {
    this.app.container.singleton(InstanceRegistry, async (resolver) => {
      const { default: quireConfig } = await import('#config/quire')
      const { default: env } = await import('#start/env')
      const { readFileSync } = await import('node:fs')
      const { version } = JSON.parse(readFileSync(this.app.makePath('package.json'), 'utf8'))
      let store: ReportStore | null = null
      if (quireConfig.redisEnabled) {
        const manager = await resolver.make('redis')
        const redis = manager.connection()
        const key = `${env.get('REDIS_PREFIX', 'quire:')}instances`
        store = {
          put: (id, report) => redis.hset(key, id, report),
          all: () => redis.hgetall(key),
          remove: (id) => redis.hdel(key, id),
        }
      }
      this.instances = new InstanceRegistry(version, store)
      return this.instances
    })
  }

  /**
   * A web process reports itself every few seconds and, with Redis, shares
   * the errors it logs, so the Health page of any instance shows the fleet.
   */
  private async startInstanceReports() {
    const registry = await this.app.container.make(InstanceRegistry)
    const { SocketServer } = await import('#core/socket/socket_server')
    const server = await this.app.container.make('server')
    const sockets = await this.app.container.make(SocketServer)
    // Tests start their HTTP server after the providers: it has no node server yet (no rate then).
    registry.start((server.getNodeServer() as any) ?? null, () => sockets.size)
    const { default: quireConfig } = await import('#config/quire')
    if (!quireConfig.redisEnabled) return
    const { default: env } = await import('#start/env')
    const manager = await this.app.container.make('redis')
    const redis = manager.connection()
    const key = `${env.get('REDIS_PREFIX', 'quire:')}errors`
    shareErrors((entry) => {
      redis
        .multi()
        .lpush(key, JSON.stringify(entry))
        .ltrim(key, 0, ERRORS_KEPT - 1)
        .exec()
        .catch(() => {})
    }, registry.id)
  }

  /** The outbox every outbound delivery goes through (docs/outbox.md). */
  private outbox: OutboxService | null = null

  private registerOutbox() {
    this.app.container.singleton(OutboxService, async (resolver) => {
      const { default: outboxConfig } = await import('#config/outbox')
      const { QueueService } = await import('#core/services/queue_service')
      this.outbox = new OutboxService(
        await resolver.make('lucid.db'),
        () => resolver.make(QueueService),
        await resolver.make('logger'),
        outboxConfig
      )
      return this.outbox
    })
  }

  /** The web process's sending process (OUTBOX_SENDER=process with the in-process queue). */
  private sender: DetachedSender | null = null

  /**
   * With the in-process queue and OUTBOX_SENDER=process, a forked `outbox:send`
   * process runs this web process's sends (docs/outbox.md): its pump claims and
   * logs here, the sends run there, and the hub messages they make come back
   * for this process's sockets.
   */
  private async detachSending(outbox: OutboxService) {
    const { default: outboxConfig } = await import('#config/outbox')
    const { QueueService } = await import('#core/services/queue_service')
    const queue = await this.app.container.make(QueueService)
    if (outboxConfig.sender !== 'process' || queue.driverKind !== 'memory') return
    const { SocketHub } = await import('#core/socket/hub')
    const hub = await this.app.container.make(SocketHub)
    const logger = await this.app.container.make('logger')
    this.sender = new DetachedSender({
      aceScript: this.app.makePath('ace.js'),
      nice: outboxConfig.senderNice,
      answerTimeoutMs: outboxConfig.leaseMs,
      logger,
      relay: (raw) => hub.receive(raw),
      onReady: () => outbox.pump.wake(),
      onKick: (at, reclaim) => outbox.kick(at, reclaim),
      onGiveUp: () => {
        this.sender = null
        outbox.sendThrough(null)
        outbox.pump.wake()
      },
    })
    outbox.sendThrough(this.sender)
    this.sender.start()
  }

  /** Serving processes sweep for deliveries whose job was lost (a crash, an in-process queue). */
  async ready() {
    if (!['web', 'test'].includes(this.app.getEnvironment())) return
    const outbox = await this.app.container.make(OutboxService)
    outbox.startSweeper()
    if (this.app.getEnvironment() === 'web') await this.detachSending(outbox)
    await this.startAuditPrune()
    await this.startInstanceReports()
  }

  private registerUsers() {
    this.app.container.singleton(UserService, async (resolver) => {
      return new UserService(
        await resolver.make(StampService),
        () => resolver.make(PluginRegistry),
        await resolver.make(AuditLog)
      )
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
        },
        await resolver.make(AuditLog)
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
        quireConfig,
        await resolver.make(GatewayAuth)
      )
    })
  }

  /** Where the gateways plugin installs how a gateway's sesskey is checked (sendMsg from a phone). */
  private registerGatewayAuth() {
    this.app.container.singleton(GatewayAuth, () => new GatewayAuth())
  }
}
