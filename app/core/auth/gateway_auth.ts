import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { Credentials } from './resolve_actor.js'

/**
 * An SMS gateway (spec 5.A.6): a phone that registerSMSGateway gave a sesskey.
 * Its sesskey names the gateway, never a user: it acts only for the senders
 * of the messages it forwards.
 */
export interface GatewayPrincipal {
  id: number
  /** The gateway's own number, E.164. */
  phone: string
}

/**
 * How gateways are authenticated; the gateways plugin provides it. The kernel
 * knows no gateway table: it only routes a gateway's sesskey here.
 */
export interface GatewayAuthenticator {
  /** The gateway whose sesskey `credentials` carry with its number as o_u, or a nok. */
  authenticate(credentials: Credentials): Promise<GatewayPrincipal>
  /**
   * The actor of a gateway's request made for a sender (sendMsg): the user u_c
   * names, restricted to the gateway's book when one is fixed, or a nok.
   */
  actorFor(gateway: GatewayPrincipal, credentials: Credentials): Promise<Actor>
  /**
   * A gateway attaching to the kernel's WebSocket with its sesskey: from now
   * on the plugin alone feeds that socket (the kernel indexes it for no user,
   * so it receives no user event) and answers its frames.
   */
  attachSocket(gateway: GatewayPrincipal, socket: GatewaySocket): Promise<GatewaySocketSession>
}

/** A frame as the socket carries it: a JSON object with an integer type. */
type SocketFrame = Record<string, unknown> & { type: number }

/** A gateway's WebSocket connection, as the kernel hands it to the gateways plugin. */
export interface GatewaySocket {
  /** Connection id (unique per process). */
  id: string
  send(frame: SocketFrame): void
  close(code: number, reason: string): void
}

/** What the gateways plugin does with a gateway's socket once attached. */
export interface GatewaySocketSession {
  /**
   * A frame the gateway sent, its o_u and sesskey already checked as this
   * gateway's (pings are the kernel's): the answer, nothing, or a thrown nok.
   */
  receive(frame: SocketFrame): Promise<SocketFrame | void>
  /** The socket closed (the plugin stops feeding it). */
  closed(): void
}

/**
 * Every gateway sesskey starts with this: the dispatcher tells one from a
 * user's sesskey (7 groups of 4 alphanumerics) without a lookup.
 */
export const GATEWAY_SESSKEY_PREFIX = 'gw-'

export const isGatewaySesskey = (sesskey: string) => sesskey.startsWith(GATEWAY_SESSKEY_PREFIX)

/**
 * The kernel's one gateway extension point: the gateways plugin installs its
 * authenticator at boot; without it, no gateway sesskey is accepted.
 */
export class GatewayAuth {
  private factory: (() => Promise<GatewayAuthenticator>) | null = null

  use(factory: () => Promise<GatewayAuthenticator>) {
    this.factory = factory
  }

  async authenticator(): Promise<GatewayAuthenticator> {
    if (!this.factory) {
      throw rpcError('INVALID_SESSKEY', 'Invalid sesskey: this server serves no SMS gateway')
    }
    return this.factory()
  }
}
