import vine from '@vinejs/vine'
import type { Logger } from '@adonisjs/core/logger'
import type { ContainerResolver } from '@adonisjs/core/container'
import type { ContainerBindings } from '@adonisjs/core/types'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { toRpcError } from '#core/rpc/failure'
import { looseText, text, validateWire } from '#core/rpc/wire'
import { enforceRestrictions } from '#core/auth/restrictions'
import { credentialsOf, requiredCredentials } from '#core/auth/resolve_actor'
import { GatewayAuth, isGatewaySesskey } from '#core/auth/gateway_auth'
import { CloseCode, MessageType, refusal, type Frame, type OutFrame } from './protocol.js'
import type { SocketHub } from './hub.js'
import type { Connection } from './connection.js'
import type { SocketAuthenticator } from './socket_auth.js'
import type {
  SocketContext,
  SocketHandler,
  SocketHandlerClass,
  SystemMessageHandler,
  SystemMessageHandlerClass,
} from './socket_handler.js'

/** The envelope of a system message (type 11): which message, and the uuid its ack echoes. */
const systemEnvelope = vine.compile(
  vine.object({
    msg: text(),
    uuid: looseText().optional(),
  })
)

interface Loaded<Class, Instance> {
  Handler: Class
  instance: Instance
}

/** How a refusal names what was refused (READONLY_SESSION's message). */
const ACTION_LABEL = 'This message'

/**
 * The socket's request pipeline, the same steps as api.php's dispatcher:
 * route the frame to its handler (kernel types, a plugin's socket type, or a
 * system message), authenticate (SocketAuthenticator), enforce the session's
 * restrictions ('#core/auth/restrictions'), validate the frame with the
 * handler's compiled schema (validateWire: the '#core/rpc/wire' rules), call
 * handle(), and answer; any failure is mapped by '#core/rpc/failure' and
 * answered as a refusal. Handlers are loaded once per class through the
 * container (their @inject() services resolved then).
 */
export class FrameDispatcher {
  private handlers = new Map<string, Promise<Loaded<any, any>>>()

  constructor(
    private container: ContainerResolver<ContainerBindings>,
    private registry: PluginRegistry,
    private auth: SocketAuthenticator,
    private hub: SocketHub,
    private logger: Logger
  ) {}

  /** Handles one frame of a connection and sends its answer (ack, refusal or nothing). */
  async handle(connection: Connection, frame: Frame) {
    try {
      const answer = await this.route(connection, frame)
      if (answer) connection.send(answer)
    } catch (error) {
      this.fail(connection, frame, error)
    }
  }

  private async route(connection: Connection, frame: Frame): Promise<OutFrame | void> {
    if (connection.gateway) return this.gatewayFrame(connection, frame)
    const attach = frame.type === MessageType.ATTACH || frame.type === MessageType.ATTACH_LEGACY
    if (attach && isGatewaySesskey(credentialsOf(frame).sesskey)) {
      return this.attachGateway(connection, frame)
    }
    switch (frame.type) {
      case MessageType.ATTACH:
      case MessageType.ATTACH_LEGACY: {
        // Real clients block on one frame after their attach: a book-updates-ready for the
        // attached user is harmless (it only asks for a getAllBooks delta) and starts their sync.
        const actor = await this.auth.authenticate(connection, frame)
        return { type: MessageType.BOOK_UPDATES, u_c: actor.user.code }
      }
      case MessageType.PING:
        await this.auth.authenticate(connection, frame)
        return { type: MessageType.ACK_PING, status: 'ok' }
      case MessageType.SYSTEM_MESSAGE:
        return this.systemMessage(connection, frame)
    }
    const claim = this.registry.socketTypes.get(frame.type)
    if (!claim) {
      connection.badFrames++
      throw rpcError('UNKNOWN_MESSAGE_TYPE', `Unknown message type: ${frame.type}`)
    }
    const { Handler, instance } = await this.load<SocketHandlerClass, SocketHandler>(
      `type:${frame.type}`,
      claim.load
    )
    const actor = await this.auth.authenticate(connection, frame, Handler.onBehalfField)
    const input = await this.admit(connection, actor, Handler, frame)
    return instance.handle(input, this.context(connection, actor))
  }

  /**
   * An SMS gateway attaching with its sesskey (docs/socket.md "SMS gateways"):
   * checked by the gateways plugin (GatewayAuth), which feeds the connection
   * from then on and answers the attach. Indexed for no user: no user event
   * reaches it.
   */
  private async attachGateway(connection: Connection, frame: Frame): Promise<OutFrame | void> {
    if (connection.userId !== null) {
      throw rpcError(
        'USER_MISMATCH',
        'This connection is attached to a user: a gateway attaches on a connection of its own'
      )
    }
    const gateways = await this.gatewayAuthenticator()
    const gateway = await gateways.authenticate(requiredCredentials(frame))
    if (connection.attachTimer) clearTimeout(connection.attachTimer)
    connection.attachTimer = null
    const session = await gateways.attachSocket(gateway, {
      id: connection.id,
      send: (out) => connection.send(out),
      close: (code, reason) => connection.close(code, reason),
    })
    if (!connection.open) {
      // Closed while attaching: the close handler saw no gateway to tell.
      session.closed()
      return
    }
    connection.gateway = { id: gateway.id, session }
    return session.receive(frame)
  }

  /**
   * A frame on a gateway's connection: its o_u and sesskey must still be that
   * gateway's (an ended session answers INVALID_SESSKEY and closes); pings
   * are answered here, every other frame by the plugin's session.
   */
  private async gatewayFrame(connection: Connection, frame: Frame): Promise<OutFrame | void> {
    const attached = connection.gateway!
    const gateways = await this.gatewayAuthenticator()
    const gateway = await gateways.authenticate(requiredCredentials(frame))
    if (gateway.id !== attached.id) {
      throw rpcError('USER_MISMATCH', 'o_u and sesskey are not those of the attached gateway')
    }
    if (frame.type === MessageType.PING) return { type: MessageType.ACK_PING, status: 'ok' }
    return attached.session.receive(frame)
  }

  /** The gateways plugin's authenticator (INVALID_SESSKEY when no plugin serves gateways). */
  private async gatewayAuthenticator() {
    const gateways = await this.container.make(GatewayAuth)
    return gateways.authenticator()
  }

  private async systemMessage(connection: Connection, frame: Frame): Promise<OutFrame> {
    const { msg, uuid } = await validateWire<{ msg: string; uuid?: string }>(systemEnvelope, frame)
    const claim = this.registry.systemMessages.get(msg)
    if (!claim) throw rpcError('UNKNOWN_MESSAGE_TYPE', `Unknown system message: ${msg}`)
    const { Handler, instance } = await this.load<SystemMessageHandlerClass, SystemMessageHandler>(
      `system:${msg}`,
      claim.load
    )
    const actor = await this.auth.authenticate(connection, frame)
    const input = await this.admit(connection, actor, Handler, frame)
    await instance.handle(input, this.context(connection, actor))
    const ack: OutFrame = { type: MessageType.ACK_SYSTEM, status: 'ok' }
    if (uuid !== undefined) ack.uuid = uuid
    return ack
  }

  /**
   * The session's restrictions, then the handler's schema: the input its
   * handle() receives. The hub's record of the frame being handled becomes
   * the validated input, so realtime bindings rate origins on read values.
   */
  private async admit(
    connection: Connection,
    actor: Actor,
    Handler: SocketHandlerClass | SystemMessageHandlerClass,
    frame: Frame
  ) {
    enforceRestrictions(
      { label: ACTION_LABEL, writes: Handler.writes, area: Handler.area },
      actor,
      frame
    )
    const input = await validateWire<Record<string, unknown>>(Handler.validator, frame)
    this.hub.frameValidated(connection, { ...input, type: frame.type })
    return input
  }

  private context(connection: Connection, actor: Actor): SocketContext {
    return {
      actor,
      connection: { id: connection.id, send: (out) => connection.send(out) },
      hub: this.hub,
      logger: this.logger,
    }
  }

  /** The handler class of a claim and its one instance, made by the container (once per class). */
  private load<Class extends new (...args: any[]) => Instance, Instance>(
    key: string,
    load: () => Promise<{ default: unknown }>
  ): Promise<Loaded<Class, Instance>> {
    let loading = this.handlers.get(key) as Promise<Loaded<Class, Instance>> | undefined
    if (!loading) {
      loading = load().then(async ({ default: Handler }) => ({
        Handler: Handler as Class,
        instance: (await this.container.make(Handler as Class)) as Instance,
      }))
      loading.catch(() => this.handlers.delete(key))
      this.handlers.set(key, loading)
    }
    return loading
  }

  /** The refusal of a failed frame (the one error mapping of both entry points), and its close. */
  private fail(connection: Connection, frame: Frame, error: unknown) {
    const rpc = toRpcError(error, this.logger, { socketType: frame.type })
    connection.send(refusal(frame, { errorCode: rpc.code, errorMsg: rpc.message }))
    if (rpc.code === 'INVALID_SESSKEY')
      connection.close(CloseCode.SESSION_DROPPED, 'Session dropped or unknown sesskey')
    else if (rpc.code === 'SESSION_EXPIRED')
      connection.close(CloseCode.SESSION_EXPIRED, 'Session expired')
    else if (rpc.code === 'UNKNOWN_MESSAGE_TYPE')
      connection.countBad(CloseCode.BAD_FRAMES, 'Too many bad frames')
  }
}
