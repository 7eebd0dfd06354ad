import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { GatewayPrincipal, GatewaySocket, GatewaySocketSession } from '#core/auth/gateway_auth'
import { rpcError } from '#core/rpc/errors'
import { looseText, validateWire } from '#core/rpc/wire'
import { SocketHub } from '#core/socket/hub'
import { CloseCode, MessageType } from '#core/socket/protocol'
import { validator as ackValidator } from '../operations/ack_gateway_outbox.js'
import { SmsOutboxService, type AckState } from '../services/sms_outbox_service.js'

/** The frames of a gateway's socket (README "Outbound SMS", docs/socket.md "SMS gateways"). */
export const GatewayFrame = {
  /** server -> gateway: due SMS, leased (getGatewayOutbox's answer); also the attach's answer. */
  OUTBOX: 40,
  /** gateway -> server: reports SMS as ackGatewayOutbox does. */
  ACK: 41,
  /** server -> gateway: the answer to a report. */
  ACK_ANSWER: 42,
} as const

/** The hub signal telling the other instances that a gateway's session ended (its id). */
export const GATEWAY_ENDED_SIGNAL = 'gateways:gateway_ended'

/** How many SMS one outbox frame carries; a full frame is followed by the next one. */
const FRAME_LIMIT = 20

/** The report's envelope: the uuid its answer echoes (the report's fields are ackGatewayOutbox's). */
const ackEnvelope = vine.compile(vine.object({ uuid: looseText().trim().maxLength(64).optional() }))

interface Feed {
  gatewayId: number
  /** An outbox frame is being made: a wake-up meanwhile makes one more after it. */
  busy: boolean
  again: boolean
}

/**
 * SMS gateways of the spec's protocol attached to the kernel's WebSocket
 * with their sesskey (the kernel hands their sockets here through
 * GatewayAuth). When SMS are queued for a gateway, on any instance (the
 * outbox's wake-up, relayed by the hub's channel as for Android phones), its
 * sockets on this instance receive them, leased exactly as getGatewayOutbox
 * hands them out; the gateway reports them on the socket or through
 * ackGatewayOutbox. An ended session closes its sockets on every instance.
 */
@inject()
export class GatewaySockets {
  private feeds = new Map<GatewaySocket, Feed>()

  constructor(
    private outbox: SmsOutboxService,
    private hub: SocketHub
  ) {
    outbox.onEnqueued((gatewayId) => this.wake(gatewayId))
    hub.onSignal<unknown>(GATEWAY_ENDED_SIGNAL, (gatewayId) => {
      if (typeof gatewayId === 'number') this.closeLocal(gatewayId)
    })
  }

  /** A gateway's socket, attached: fed from now on; the session answers its frames. */
  attach(gateway: GatewayPrincipal, socket: GatewaySocket): GatewaySocketSession {
    this.feeds.set(socket, { gatewayId: gateway.id, busy: false, again: false })
    return {
      receive: (frame) => this.receive(gateway, frame),
      closed: () => this.feeds.delete(socket),
    }
  }

  /** The gateway's session ended (unregistered, or registered again): its sockets close everywhere. */
  end(gatewayId: number) {
    this.closeLocal(gatewayId)
    this.hub.signal(GATEWAY_ENDED_SIGNAL, gatewayId)
  }

  private closeLocal(gatewayId: number) {
    for (const [socket, feed] of [...this.feeds]) {
      if (feed.gatewayId !== gatewayId) continue
      this.feeds.delete(socket)
      socket.close(CloseCode.SESSION_DROPPED, 'Gateway session ended')
    }
  }

  /** A gateway's frames: its attach (answered with its outbox) and its reports; nothing else. */
  private async receive(gateway: GatewayPrincipal, frame: Record<string, unknown>) {
    if (frame.type === MessageType.ATTACH || frame.type === MessageType.ATTACH_LEGACY) {
      return { type: GatewayFrame.OUTBOX, ...(await this.outbox.handOut(gateway.id, FRAME_LIMIT)) }
    }
    if (frame.type === GatewayFrame.ACK) {
      const { uuid } = await validateWire<{ uuid?: string }>(ackEnvelope, frame)
      const input = await validateWire<{ ids: number[]; state: AckState; reason?: string }>(
        ackValidator,
        frame
      )
      const { updated } = await this.outbox.ack(
        gateway.id,
        input.ids.map((id) => ({ id, state: input.state, reason: input.reason }))
      )
      return { type: GatewayFrame.ACK_ANSWER, status: 'ok', updated, ...(uuid ? { uuid } : {}) }
    }
    throw rpcError(
      'UNKNOWN_MESSAGE_TYPE',
      `A gateway's connection sends only frames of types 7 (attach), 9 (ping) and ${GatewayFrame.ACK} (report), not ${frame.type}`
    )
  }

  /** SMS were queued for this gateway (null: for whichever collects first). */
  private wake(gatewayId: number | null) {
    for (const [socket, feed] of this.feeds) {
      if (gatewayId === null || feed.gatewayId === gatewayId) this.feed(socket, feed)
    }
  }

  /** Sends the socket its due SMS; one collection at a time per socket, repeated while woken. */
  private feed(socket: GatewaySocket, feed: Feed) {
    if (feed.busy) {
      feed.again = true
      return
    }
    feed.busy = true
    void (async () => {
      try {
        do {
          feed.again = false
          const outbox = await this.outbox.handOut(feed.gatewayId, FRAME_LIMIT)
          if (outbox.sms.length > 0) socket.send({ type: GatewayFrame.OUTBOX, ...outbox })
          if (outbox.sms.length === FRAME_LIMIT) feed.again = true
        } while (feed.again && this.feeds.has(socket))
      } catch (error) {
        // What was not handed out stays queued; leased SMS come back when their lease lapses.
        this.hub.logger.error(
          { err: error, gateway: feed.gatewayId },
          'gateway socket: feed failed'
        )
      } finally {
        feed.busy = false
      }
    })()
  }
}
