import type { IncomingMessage, Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { WebSocketServer, WebSocket, type RawData } from 'ws'
import type { Logger } from '@adonisjs/core/logger'
import type { ContainerResolver } from '@adonisjs/core/container'
import type { ContainerBindings } from '@adonisjs/core/types'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import { RpcError, rpcError } from '#core/rpc/errors'
import { isTransientDbError } from '#core/services/db_errors'
import { credentialsOf, isSameUser, onBehalfTarget } from '#core/auth/resolve_actor'
import type { SocketConfig } from '#config/socket'
import type User from '#models/user'
import type ApiSession from '#models/api_session'
import {
  CloseCode,
  MessageType,
  parseFrame,
  refusal,
  textOf,
  type ErrorFields,
  type Frame,
  type OutFrame,
} from './protocol.js'
import type { HubConnection, SocketHub } from './hub.js'
import type {
  SocketContext,
  SocketHandler,
  SocketHandlerClass,
  SystemMessageFields,
  SystemMessageHandler,
  SystemMessageHandlerClass,
} from './socket_handler.js'

/** A client that stops reading: past this much unsent data its connection is dropped. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024
const TEXT_FRAME = { binary: false }

interface CachedAuth {
  sesskey: string
  o_u: string
  principal: User
  session: ApiSession
  checkedAt: number
  /** u_c / obo_u values already checked for this principal. */
  onBehalf: Map<string, User>
}

let connectionCounter = 0

/** One WebSocket client: its binding (attached user and session), limits and frame queue. */
class Connection implements HubConnection {
  readonly id: string
  userId: number | null = null
  userCode: string | null = null
  sessionId: number | null = null
  auth: CachedAuth | null = null
  alive = true
  tokens: number
  refilledAt = Date.now()
  badFrames = 0
  refusedAt = 0
  queue: Frame[] = []
  busy = false
  attachTimer: NodeJS.Timeout | null = null

  constructor(
    readonly ws: WebSocket,
    instance: string,
    burst: number
  ) {
    this.id = `${instance.slice(0, 8)}-${++connectionCounter}`
    this.tokens = burst
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN
  }

  sendRaw(data: string | Buffer) {
    if (!this.open) return
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      // The client does not read what it is sent: holding more for it would only eat memory.
      this.ws.terminate()
      return
    }
    // A Buffer is sent as a text frame as it is (ws does not copy nor mask server frames).
    this.ws.send(data, TEXT_FRAME)
  }

  send(frame: OutFrame) {
    this.sendRaw(JSON.stringify(frame))
  }

  close(code: number, reason: string) {
    this.queue = []
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close(code, reason)
    }
  }
}

interface Loaded<T> {
  Handler: T
  instance: any
}

/**
 * The WebSocket endpoint (`/live/socket`, spec part 6). It owns the wire:
 * parsing, limits, per-frame authentication, attach, ping and the system
 * message envelope; every other message type is handled by the plugin that
 * registered it. Attached to the HTTP server with `noServer` and a routed
 * upgrade, so other upgrade paths are left to their owners.
 */
export class SocketServer {
  private wss: WebSocketServer
  private connections = new Set<Connection>()
  private attached = new WeakSet<HttpServer>()
  private heartbeat: NodeJS.Timeout | null = null
  private handlers = new Map<string, Promise<Loaded<any>>>()
  private closing = false

  constructor(
    private container: ContainerResolver<ContainerBindings>,
    private registry: PluginRegistry,
    private access: AccessService,
    private users: UserService,
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
  }

  get size() {
    return this.connections.size
  }

  /** Routes upgrades of the socket path on this HTTP server to the endpoint (idempotent). */
  attach(server: HttpServer) {
    if (this.attached.has(server)) return
    this.attached.add(server)
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const path = (request.url ?? '').split('?')[0].replace(/\/+$/, '')
      if (path !== this.config.path.replace(/\/+$/, '')) {
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
    const connection = new Connection(ws, this.hub.instanceId, this.config.frameBurst)
    this.connections.add(connection)
    connection.attachTimer = setTimeout(() => {
      if (connection.userId === null) {
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
    })
  }

  // ---- limits and parsing ------------------------------------------------------------

  private receive(connection: Connection, data: RawData, isBinary: boolean) {
    connection.alive = true
    if (!connection.open) return
    if (!this.takeToken(connection)) {
      this.refuse(connection, null, {
        errorCode: 'RATE_LIMITED',
        errorMsg: 'Too many frames: this one was dropped',
      })
      this.countBad(connection, CloseCode.FLOOD, 'Flood: too many frames')
      return
    }
    if (isBinary) {
      this.refuse(connection, null, {
        errorCode: 'MALFORMED_FRAME',
        errorMsg: 'Binary frames are not accepted: send JSON text',
      })
      this.countBad(connection, CloseCode.BAD_FRAMES, 'Too many malformed frames')
      return
    }
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data as ArrayBuffer).toString('utf8')
    const frame = parseFrame(text)
    if (typeof frame === 'string') {
      this.refuse(connection, null, {
        errorCode: 'MALFORMED_FRAME',
        errorMsg: `Malformed frame: ${frame}`,
      })
      this.countBad(connection, CloseCode.BAD_FRAMES, 'Too many malformed frames')
      return
    }
    if (connection.queue.length >= this.config.maxPendingFrames) {
      this.refuse(connection, frame, {
        errorCode: 'RATE_LIMITED',
        errorMsg: 'Too many frames waiting: this one was dropped',
      })
      this.countBad(connection, CloseCode.FLOOD, 'Flood: too many frames waiting')
      return
    }
    connection.queue.push(frame)
    if (!connection.busy) void this.pump(connection)
  }

  /** Token bucket: frameBurst tokens, refilled at framesPerSecond. */
  private takeToken(connection: Connection) {
    const now = Date.now()
    const elapsed = (now - connection.refilledAt) / 1000
    connection.refilledAt = now
    connection.tokens = Math.min(
      this.config.frameBurst,
      connection.tokens + elapsed * this.config.framesPerSecond
    )
    if (connection.tokens < 1) return false
    connection.tokens -= 1
    return true
  }

  private countBad(connection: Connection, code: number, reason: string) {
    connection.badFrames++
    if (connection.badFrames > this.config.maxBadFrames) connection.close(code, reason)
  }

  /** Refusals of one flood are answered at most once per second (answers must not amplify it). */
  private refuse(connection: Connection, frame: Frame | null, error: ErrorFields) {
    if (error.errorCode === 'RATE_LIMITED') {
      const now = Date.now()
      if (now - connection.refusedAt < 1000) return
      connection.refusedAt = now
    }
    connection.send(refusal(frame, error))
  }

  /** Frames of one connection are handled one after the other, in the order sent. */
  private async pump(connection: Connection) {
    connection.busy = true
    try {
      while (connection.queue.length && connection.open) {
        const frame = connection.queue.shift()!
        this.hub.frameStarted(connection, frame)
        try {
          await this.handle(connection, frame)
        } finally {
          this.hub.frameEnded(connection)
        }
      }
    } finally {
      connection.busy = false
    }
  }

  // ---- dispatch ------------------------------------------------------------------------

  private async handle(connection: Connection, frame: Frame) {
    try {
      const answer = await this.route(connection, frame)
      if (answer) connection.send(answer)
    } catch (error) {
      this.fail(connection, frame, error)
    }
  }

  private async route(connection: Connection, frame: Frame): Promise<OutFrame | void> {
    switch (frame.type) {
      case MessageType.ATTACH:
      case MessageType.ATTACH_LEGACY:
        await this.authenticate(connection, frame)
        return
      case MessageType.PING:
        await this.authenticate(connection, frame)
        return { type: MessageType.ACK_PING, status: 'ok' }
      case MessageType.SYSTEM_MESSAGE:
        return this.systemMessage(connection, frame)
    }
    const claim = this.registry.socketTypes.get(frame.type)
    if (!claim) {
      connection.badFrames++
      throw rpcError('UNKNOWN_MESSAGE_TYPE', `Unknown message type: ${frame.type}`)
    }
    const { Handler, instance } = await this.load<SocketHandlerClass>(
      `type:${frame.type}`,
      claim.load
    )
    const actor = await this.authenticate(connection, frame, Handler.onBehalfField)
    this.enforceRestrictions(actor, Handler, frame)
    return (instance as SocketHandler).handle(frame, this.context(connection, actor))
  }

  private async systemMessage(connection: Connection, frame: Frame): Promise<OutFrame> {
    const msg = textOf(frame.msg)?.trim() ?? ''
    if (msg === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: msg (the system message name)')
    const claim = this.registry.systemMessages.get(msg)
    if (!claim) throw rpcError('UNKNOWN_MESSAGE_TYPE', `Unknown system message: ${msg}`)
    const { Handler, instance } = await this.load<SystemMessageHandlerClass>(
      `system:${msg}`,
      claim.load
    )
    const actor = await this.authenticate(connection, frame)
    this.enforceRestrictions(actor, Handler, frame)
    const input: SystemMessageFields = {
      uuid: textOf(frame.uuid) ?? undefined,
      b_o: textOf(frame.b_o)?.trim() ?? undefined,
      b_c: textOf(frame.b_c)?.trim() ?? undefined,
      param: textOf(frame.param)?.trim() ?? undefined,
      value: frame.value,
    }
    await (instance as SystemMessageHandler).handle(input, this.context(connection, actor))
    const ack: OutFrame = { type: MessageType.ACK_SYSTEM, status: 'ok' }
    if (input.uuid !== undefined) ack.uuid = input.uuid
    return ack
  }

  private context(connection: Connection, actor: Actor): SocketContext {
    return {
      actor,
      connection: { id: connection.id, send: (out) => connection.send(out) },
      hub: this.hub,
      logger: this.logger,
    }
  }

  private load<T extends { new (...args: any[]): any }>(
    key: string,
    load: () => Promise<{ default: unknown }>
  ) {
    let loading = this.handlers.get(key) as Promise<Loaded<T>> | undefined
    if (!loading) {
      loading = load().then(async ({ default: Handler }) => ({
        Handler: Handler as T,
        instance: await this.container.make(Handler as T),
      }))
      loading.catch(() => this.handlers.delete(key))
      this.handlers.set(key, loading)
    }
    return loading
  }

  private fail(connection: Connection, frame: Frame, error: unknown) {
    let rpc: RpcError
    if (error instanceof RpcError) {
      rpc = error
    } else if (isTransientDbError(error)) {
      rpc = rpcError('DEADLOCK', 'Deadlock: the database reported a transient conflict, retry')
    } else {
      const reference = Math.random().toString(36).slice(2, 10)
      this.logger.error({ err: error, type: frame.type, reference }, 'socket frame failed')
      rpc = rpcError('INTERNAL_ERROR', `Internal error (reference ${reference})`)
    }
    connection.send(refusal(frame, { errorCode: rpc.code, errorMsg: rpc.message }))
    if (rpc.code === 'INVALID_SESSKEY')
      connection.close(CloseCode.SESSION_DROPPED, 'Session dropped or unknown sesskey')
    else if (rpc.code === 'SESSION_EXPIRED')
      connection.close(CloseCode.SESSION_EXPIRED, 'Session expired')
    else if (rpc.code === 'UNKNOWN_MESSAGE_TYPE')
      this.countBad(connection, CloseCode.BAD_FRAMES, 'Too many bad frames')
  }

  // ---- authentication ------------------------------------------------------------------

  /**
   * Every frame carries o_u and sesskey. A frame whose keys equal those last
   * checked on this connection reuses that check for SOCKET_AUTH_RECHECK_MS
   * (revocations close the socket at once through the hub); any other keys
   * are resolved in full. A successful check (re)attaches the connection.
   */
  private async authenticate(
    connection: Connection,
    frame: Frame,
    onBehalfField?: string
  ): Promise<Actor> {
    const credentials = credentialsOf(frame)
    if (credentials.sesskey === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey')
    if (credentials.o_u === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: o_u')
    const obo = onBehalfField ? (textOf(frame[onBehalfField])?.trim() ?? '') : ''
    const uc = obo !== '' ? obo : credentials.u_c

    const now = Date.now()
    let auth = connection.auth
    const fresh =
      auth !== null &&
      auth.sesskey === credentials.sesskey &&
      auth.o_u === credentials.o_u &&
      now - auth.checkedAt < this.config.authRecheckMs &&
      !(auth.session.expiresAt && auth.session.expiresAt.toMillis() < now)
    if (!fresh) {
      const { session, user: principal } = await this.access.resolveSession(credentials.sesskey)
      if (!(await isSameUser(this.users, credentials.o_u, principal))) {
        throw rpcError('USER_MISMATCH', 'o_u does not match the session', {
          process: 'invalid o_u',
        })
      }
      auth = {
        sesskey: credentials.sesskey,
        o_u: credentials.o_u,
        principal,
        session,
        checkedAt: now,
        onBehalf: new Map(),
      }
      connection.auth = auth
      this.bind(connection, principal, session)
    }
    const principal = auth!.principal
    let user = auth!.onBehalf.get(uc)
    if (!user) {
      user = await onBehalfTarget(this.users, principal, uc)
      auth!.onBehalf.set(uc, user)
    }
    const session = auth!.session
    return {
      user,
      principal,
      session,
      restrictions: session.restrictions,
      onBehalf: user !== principal,
    }
  }

  private bind(connection: Connection, principal: User, session: ApiSession) {
    if (connection.attachTimer) {
      clearTimeout(connection.attachTimer)
      connection.attachTimer = null
    }
    if (connection.userId === principal.id && connection.sessionId === session.id) return
    this.hub.unindex(connection)
    connection.userId = principal.id
    connection.userCode = principal.code
    connection.sessionId = session.id
    this.hub.index(connection)
  }

  /** What a restricted session may not do (the same rules as api.php's dispatcher). */
  private enforceRestrictions(
    actor: Actor,
    Handler: { writes: boolean; area?: OperationArea },
    frame: Frame
  ) {
    const restrictions = actor.restrictions
    if (restrictions.readonly && Handler.writes) {
      throw rpcError('READONLY_SESSION', 'This message writes, and this session is read-only')
    }
    const area = Handler.area
    const hidden =
      (area === 'messages' && restrictions.hideMessages) ||
      (area === 'tables' && restrictions.hideTables) ||
      (area === 'events' && restrictions.hideEvents)
    if (hidden) throw rpcError('RESTRICTED_SESSION', `This session may not use ${area}`)
    if (restrictions.carnet_code) {
      const bc = textOf(frame.b_c)?.trim() ?? ''
      const bo = textOf(frame.b_o)?.trim() ?? ''
      if (
        (bc !== '' && bc !== restrictions.carnet_code) ||
        (bo !== '' && restrictions.carnet_owner && bo !== restrictions.carnet_owner)
      ) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
    }
  }

  // ---- shutdown --------------------------------------------------------------------------

  /** Closes every connection with 1001 (going away) and stops accepting new ones. */
  async shutdown() {
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
  }
}
