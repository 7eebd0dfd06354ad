import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, WebSocket, type RawData } from 'ws'
import type { Logger } from '@adonisjs/core/logger'
import type { ContainerResolver } from '@adonisjs/core/container'
import type { ContainerBindings } from '@adonisjs/core/types'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import type { SocketConfig } from '#config/socket'
import { collapseSlashes } from '#core/http/node_server'
import { CloseCode, parseFrame } from './protocol.js'
import type { SocketHub } from './hub.js'
import { Connection } from './connection.js'
import { SocketAuthenticator } from './socket_auth.js'
import { FrameDispatcher } from './frame_dispatcher.js'

/**
 * The WebSocket endpoint (`/live/socket`, docs/spec/service-interface.md part 6). It owns the wire:
 * the upgrade, accepting connections, the limits (frame size, rate, pending
 * frames, bad frames), parsing frames (a JSON object with an integer type),
 * the heartbeat and shutdown. Each parsed frame goes to the FrameDispatcher
 * (authentication, restrictions, validation, the handler), one frame at a
 * time per connection, in the order sent. Attached to the HTTP server with
 * `noServer` and a routed upgrade, so other upgrade paths are left to their
 * owners.
 */
export class SocketServer {
  private wss: WebSocketServer
  private connections = new Set<Connection>()
  private attached = new WeakSet<HttpServer>()
  private heartbeat: NodeJS.Timeout | null = null
  private dispatcher: FrameDispatcher
  private closing = false

  constructor(
    container: ContainerResolver<ContainerBindings>,
    registry: PluginRegistry,
    access: AccessService,
    users: UserService,
    readonly hub: SocketHub,
    private logger: Logger,
    private config: SocketConfig
  ) {
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: config.maxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
    })
    const auth = new SocketAuthenticator(access, users, hub, config)
    this.dispatcher = new FrameDispatcher(container, registry, auth, hub, logger)
  }

  get size() {
    return this.connections.size
  }

  /**
   * Routes upgrades of the socket path on this HTTP server to the endpoint
   * (idempotent). `anyPath`: every upgrade is the socket's (its own port).
   */
  attach(server: HttpServer, { anyPath = false } = {}) {
    if (this.attached.has(server)) return
    this.attached.add(server)
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Doubled slashes are tolerated as on every route (upgrades do not pass the request listener).
      const path = collapseSlashes((request.url ?? '').split('?')[0]).replace(/\/+$/, '')
      if (!anyPath && !this.config.paths.has(path)) {
        // Another upgrade listener may own this path; alone, answer it rather than leave it hanging.
        if (server.listenerCount('upgrade') === 1) {
          socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
        }
        return
      }
      if (this.closing) {
        socket.end(
          'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'
        )
        return
      }
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws))
    })
    this.startHeartbeat()
  }

  private ownServer: HttpServer | null = null

  /**
   * Serves the socket on a port of its own as well (SOCKET_PORT), on every
   * path: clients such as the official PHP SDK connect to `wss://host:10100/`.
   * Plain HTTP requests there get 426 Upgrade Required.
   */
  async listen(port: number, host: string) {
    const server = createServer((_request, response) => {
      response.writeHead(426, {
        'Connection': 'Upgrade',
        'Upgrade': 'websocket',
        'Content-Length': 0,
      })
      response.end()
    })
    this.attach(server, { anyPath: true })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => resolve())
    })
    this.ownServer = server
    this.logger.info({ port, host }, 'socket: listening on its own port')
  }

  private startHeartbeat() {
    if (this.heartbeat) return
    this.heartbeat = setInterval(() => this.beat(), this.config.heartbeatMs)
    this.heartbeat.unref?.()
  }

  /** Reaps connections that did not answer the previous ping, and pings the others. */
  beat() {
    for (const connection of this.connections) {
      if (!connection.alive) {
        connection.ws.terminate()
        continue
      }
      connection.alive = false
      try {
        connection.ws.ping()
      } catch {
        connection.ws.terminate()
      }
    }
  }

  private accept(ws: WebSocket) {
    // The config object itself: its limits are read live.
    const connection = new Connection(ws, this.hub.instanceId, this.config)
    this.connections.add(connection)
    connection.attachTimer = setTimeout(() => {
      if (connection.userId === null && connection.gateway === null) {
        connection.close(
          CloseCode.ATTACH_TIMEOUT,
          'No frame with valid credentials (attach) in time'
        )
      }
    }, this.config.attachTimeoutMs)
    connection.attachTimer.unref?.()

    ws.on('pong', () => (connection.alive = true))
    ws.on('message', (data, isBinary) => this.receive(connection, data, isBinary))
    ws.on('error', (error) =>
      this.logger.debug({ err: error, connection: connection.id }, 'socket error')
    )
    ws.on('close', () => {
      if (connection.attachTimer) clearTimeout(connection.attachTimer)
      connection.queue = []
      this.connections.delete(connection)
      this.hub.unindex(connection)
      connection.gateway?.session.closed()
    })
  }

  // ---- limits and parsing ------------------------------------------------------------

  private receive(connection: Connection, data: RawData, isBinary: boolean) {
    connection.alive = true
    if (!connection.open) return
    if (!connection.takeToken()) {
      connection.refuse(null, {
        errorCode: 'RATE_LIMITED',
        errorMsg: 'Too many frames: this one was dropped',
      })
      connection.countBad(CloseCode.FLOOD, 'Flood: too many frames')
      return
    }
    if (isBinary) {
      connection.refuse(null, {
        errorCode: 'MALFORMED_FRAME',
        errorMsg: 'Binary frames are not accepted: send JSON text',
      })
      connection.countBad(CloseCode.BAD_FRAMES, 'Too many malformed frames')
      return
    }
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data as ArrayBuffer).toString('utf8')
    const frame = parseFrame(text)
    if (typeof frame === 'string') {
      connection.refuse(null, {
        errorCode: 'MALFORMED_FRAME',
        errorMsg: `Malformed frame: ${frame}`,
      })
      connection.countBad(CloseCode.BAD_FRAMES, 'Too many malformed frames')
      return
    }
    if (connection.queue.length >= this.config.maxPendingFrames) {
      connection.refuse(frame, {
        errorCode: 'RATE_LIMITED',
        errorMsg: 'Too many frames waiting: this one was dropped',
      })
      connection.countBad(CloseCode.FLOOD, 'Flood: too many frames waiting')
      return
    }
    connection.queue.push(frame)
    if (!connection.busy) void this.pump(connection)
  }

  /** Frames of one connection are handled one after the other, in the order sent. */
  private async pump(connection: Connection) {
    connection.busy = true
    try {
      while (connection.queue.length && connection.open) {
        const frame = connection.queue.shift()!
        this.hub.frameStarted(connection)
        try {
          await this.dispatcher.handle(connection, frame)
        } finally {
          this.hub.frameEnded(connection)
        }
      }
    } finally {
      connection.busy = false
    }
  }

  // ---- shutdown --------------------------------------------------------------------------

  private closed: Promise<void> | null = null

  /**
   * Closes every connection with 1001 (going away) and stops accepting new
   * ones; a client that does not answer the close within a second is cut.
   * Called again, answers the first call's promise.
   */
  shutdown() {
    this.closed ??= this.closeAll()
    return this.closed
  }

  private async closeAll() {
    this.closing = true
    if (this.heartbeat) clearInterval(this.heartbeat)
    this.heartbeat = null
    const closed = [...this.connections].map(
      (connection) =>
        new Promise<void>((resolve) => {
          if (connection.ws.readyState === WebSocket.CLOSED) return resolve()
          const timer = setTimeout(() => {
            connection.ws.terminate()
            resolve()
          }, 1000)
          connection.ws.once('close', () => {
            clearTimeout(timer)
            resolve()
          })
          connection.close(CloseCode.GOING_AWAY, 'Server shutting down')
        })
    )
    await Promise.all(closed)
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    const own = this.ownServer
    if (own) await new Promise<void>((resolve) => own.close(() => resolve()))
  }
}
