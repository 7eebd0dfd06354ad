import type { ApplicationService } from '@adonisjs/core/types'
import { SocketServer } from '#core/socket/socket_server'
import { SocketHub, type HubBus } from '#core/socket/hub'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { drainHttpServer } from '#core/http/drain'

/**
 * The realtime channel (docs/socket.md): the socket hub, the WebSocket
 * endpoint attached to the HTTP server once it is ready (web environment),
 * Transmit's SSE routes and channels, the plugins' realtime bindings, and the
 * Redis pub/sub channel between instances when Redis is configured.
 */
export default class SocketProvider {
  private serves = false
  private hub: SocketHub | null = null
  private socket: SocketServer | null = null

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(SocketHub, async (resolver) => {
      const { default: socketConfig } = await import('#config/socket')
      const users = await resolver.make(UserService)
      this.hub = new SocketHub(await resolver.make('logger'), {
        bookUpdatesDelayMs: socketConfig.bookUpdatesDelayMs,
        codesOf: (userIds) => users.codesOf(userIds),
      })
      return this.hub
    })
    this.app.container.singleton(SocketServer, async (resolver) => {
      const { default: socketConfig } = await import('#config/socket')
      this.socket = new SocketServer(
        resolver,
        await resolver.make(PluginRegistry),
        await resolver.make(AccessService),
        await resolver.make(UserService),
        await resolver.make(SocketHub),
        await resolver.make('logger'),
        socketConfig
      )
      return this.socket
    })
  }

  /**
   * A graceful shutdown (SIGTERM) of a web process: no new connection, every
   * WebSocket closed with 1001, every SSE stream ended, and requests in flight
   * finished within QUEUE_SHUTDOWN_TIMEOUT (then cut). The queue drains next,
   * then providers close the database and Redis, and the process exits.
   */
  private async closeFrontDoor() {
    if (this.app.getEnvironment() !== 'web') return
    const { default: queueConfig } = await import('#config/queue')
    const server = await this.app.container.make('server')
    const nodeServer = server.getNodeServer()
    const logger = await this.app.container.make('logger')
    logger.info(
      { sockets: this.socket?.size ?? 0, graceMs: queueConfig.shutdownTimeoutMs },
      'shutting down: closing sockets and streams, finishing requests'
    )
    // Stops accepting at once; resolves when the last request has ended.
    const drained = nodeServer
      ? drainHttpServer(nodeServer as any, queueConfig.shutdownTimeoutMs)
      : Promise.resolve('drained' as const)
    await Promise.all([this.socket?.shutdown(), this.endStreams()])
    if ((await drained) === 'forced') {
      logger.warn('shutting down: requests still running after the grace period were cut')
    }
  }

  /** Ends every open SSE stream (the client sees the stream end and may reconnect elsewhere). */
  private async endStreams() {
    const { default: socketConfig } = await import('#config/socket')
    if (!this.serves || !socketConfig.transmit) return
    const transmit = await this.app.container.make('transmit')
    for (const [stream] of transmit.getManager().getAllSubscribers()) stream.end()
  }

  /** Transmit's routes must exist before the router commits them (the HTTP server's boot). */
  async start() {
    const environment = this.app.getEnvironment()
    this.serves = environment === 'web' || environment === 'test'
    if (!this.serves) return
    const { default: socketConfig } = await import('#config/socket')
    if (!socketConfig.transmit) return
    const { registerTransmit } = await import('#core/socket/transmit_channels')
    const hub = await this.app.container.make(SocketHub)
    hub.useStream(
      registerTransmit(
        await this.app.container.make('transmit'),
        await this.app.container.make(AccessService),
        await this.app.container.make(UserService)
      )
    )
  }

  async ready() {
    // Terminating hooks run last-added first (adonisrc: shutdownInReverseOrder), all before any
    // provider's shutdown. Added here, after the HTTP server's own close (added once it listens)
    // and the queue's drain (added at boot), this one runs first: the front door closes first.
    this.app.terminating(() => this.closeFrontDoor())
    const environment = this.app.getEnvironment()
    // Console processes (queue workers, commands) publish their changes to the web instances.
    if (!this.serves && environment !== 'console') return
    const hub = await this.app.container.make(SocketHub)
    await this.connectBus(hub, this.serves)
    // Dropped sessions lose their sockets at once, on every instance.
    const { default: emitter } = await import('@adonisjs/core/services/emitter')
    emitter.on('core:sessions_revoked', ({ userId, keptSessionId, reason, onlySessionId }) =>
      hub.revokeSessions(userId, keptSessionId, reason, onlySessionId)
    )
    await this.bindPlugins(hub)
    if (environment === 'web') {
      const server = await this.app.container.make('server')
      const nodeServer = server.getNodeServer()
      const socket = await this.app.container.make(SocketServer)
      if (nodeServer) socket.attach(nodeServer as any)
      const { default: socketConfig } = await import('#config/socket')
      const { default: env } = await import('#start/env')
      if (socketConfig.port) await socket.listen(socketConfig.port, env.get('HOST', '0.0.0.0'))
    }
  }

  /** Each plugin's realtime binding, made by the container (its services injected), bound to the hub. */
  private async bindPlugins(hub: SocketHub) {
    const registry = await this.app.container.make(PluginRegistry)
    for (const manifest of registry.plugins) {
      if (!manifest.realtime) continue
      const { default: Binding } = await manifest.realtime()
      const binding = await this.app.container.make(Binding)
      await binding.bind(hub)
    }
  }

  /** With Redis, the hub's channel joins the instances (publish only from console processes). */
  private async connectBus(hub: SocketHub, subscribe: boolean) {
    const { default: quireConfig } = await import('#config/quire')
    if (!quireConfig.redisEnabled) return
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const { default: env } = await import('#start/env')
    const channel = `${env.get('REDIS_PREFIX', 'quire:')}socket:hub`
    const connection = redis.connection()
    const bus: HubBus = {
      publish: (message) => connection.publish(channel, message),
      subscribe: (handler) => {
        if (!subscribe) return
        return new Promise<void>((resolve) => {
          connection.subscribe(channel, handler, {
            onSubscription: () => resolve(),
            onError: (error) => {
              this.app.container
                .make('logger')
                .then((logger) =>
                  logger.error({ err: error }, 'socket hub: Redis subscription failed')
                )
              resolve()
            },
          })
        })
      },
      close: async () => {
        if (!subscribe) return
        try {
          await connection.unsubscribe(channel)
        } catch {
          // the Redis provider may have closed the subscriber connection already
        }
      },
    }
    await hub.useBus(bus)
  }

  async shutdown() {
    await this.socket?.shutdown()
    await this.hub?.shutdown()
  }
}
