import { WebSocket } from 'ws'
import type User from '#models/user'
import type ApiSession from '#models/api_session'
import type { GatewaySocketSession } from '#core/auth/gateway_auth'
import { refusal, type ErrorFields, type Frame, type OutFrame } from './protocol.js'
import type { HubConnection } from './hub.js'

/** A client that stops reading: past this much unsent data its connection is dropped. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024
const TEXT_FRAME = { binary: false }

/** The last credentials checked on a connection (see SocketAuthenticator). */
export interface CachedAuth {
  sesskey: string
  o_u: string
  principal: User
  session: ApiSession
  checkedAt: number
  /** u_c / obo_u values already checked for this principal. */
  onBehalf: Map<string, User>
}

/** The limits a connection enforces on itself (config/socket.ts, read live). */
export interface ConnectionLimits {
  framesPerSecond: number
  frameBurst: number
  maxBadFrames: number
}

let connectionCounter = 0

/**
 * One WebSocket client: its binding (attached user and session, or an SMS
 * gateway), its cached authentication, its limits (token bucket, bad-frame
 * count) and the queue of its frames waiting to be handled.
 */
export class Connection implements HubConnection {
  readonly id: string
  userId: number | null = null
  userCode: string | null = null
  sessionId: number | null = null
  /**
   * Set when an SMS gateway attached with its sesskey instead: the gateways
   * plugin's session answers its frames; it is attached to no user.
   */
  gateway: { id: number; session: GatewaySocketSession } | null = null
  auth: CachedAuth | null = null
  alive = true
  badFrames = 0
  queue: Frame[] = []
  busy = false
  attachTimer: NodeJS.Timeout | null = null
  private tokens: number
  private refilledAt = Date.now()
  private refusedAt = 0

  constructor(
    readonly ws: WebSocket,
    instance: string,
    private limits: ConnectionLimits
  ) {
    this.id = `${instance.slice(0, 8)}-${++connectionCounter}`
    this.tokens = limits.frameBurst
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN
  }

  /** Token bucket: frameBurst tokens, refilled at framesPerSecond. False: the frame is over the rate. */
  takeToken() {
    const now = Date.now()
    const elapsed = (now - this.refilledAt) / 1000
    this.refilledAt = now
    this.tokens = Math.min(
      this.limits.frameBurst,
      this.tokens + elapsed * this.limits.framesPerSecond
    )
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }

  /** Counts a malformed or refused frame; past maxBadFrames the connection is closed. */
  countBad(code: number, reason: string) {
    this.badFrames++
    if (this.badFrames > this.limits.maxBadFrames) this.close(code, reason)
  }

  /** Refusals of one flood are answered at most once per second (answers must not amplify it). */
  refuse(frame: Frame | null, error: ErrorFields) {
    if (error.errorCode === 'RATE_LIMITED') {
      const now = Date.now()
      if (now - this.refusedAt < 1000) return
      this.refusedAt = now
    }
    this.send(refusal(frame, error))
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
