import { randomUUID } from 'node:crypto'
import type { Logger } from '@adonisjs/core/logger'
import { CloseCode, MessageType, type Frame, type OutFrame } from './protocol.js'

/** What the hub needs of a live connection. */
export interface HubConnection {
  readonly id: string
  /** The principal (o_u) the connection is attached as; null before attach. */
  readonly userId: number | null
  readonly userCode: string | null
  readonly sessionId: number | null
  /** A serialized frame (a Buffer is sent as a text frame, as is: shared by all recipients). */
  sendRaw(data: string | Buffer): void
  close(code: number, reason: string): void
}

/** Server -> client frames for a set of users. */
export interface Delivery {
  userIds: number[]
  frame: OutFrame
  /** A connection that must not receive it (the one whose frame caused it: it has its ack). */
  exceptConnection?: string | null
  /** Set the frame's u_c to each recipient's own code (book updates ready). */
  addressed?: boolean
}

/** Cross-instance transport (Redis pub/sub): one channel, JSON messages. */
export interface HubBus {
  publish(message: string): Promise<unknown>
  subscribe(handler: (message: string) => void): void | Promise<void>
  close?(): Promise<void>
}

/**
 * Publishes per-user frames on the SSE channels (Transmit) of this instance's
 * subscribers. Each instance publishes to its own subscribers the deliveries
 * it handles or receives on the hub's channel: the bus carries deliveries (those of one turn of
 * the event loop together), rather than one Transmit transport message per recipient.
 */
export interface HubStream {
  /** The channels some subscriber of this instance listens to (usually few or none). */
  subscribedChannels(): ReadonlySet<string>
  /** Sends to this instance's subscribers of `channel` only. */
  broadcast(channel: string, payload: OutFrame): void
}

type BusMessage =
  | { o: string; k: 'deliver'; d: Delivery }
  | {
      o: string
      k: 'revoke'
      userId: number
      kept: number | null
      reason: string
      only?: number
    }
  | { o: string; k: 'signal'; t: string; d: unknown }
  /** The messages one instance published in one turn of its event loop, in order. */
  | { o: string; k: 'batch'; m: BusMessage[] }

/** Stands for the recipient's code while an addressed frame is serialized once. */
const ADDRESS = '\u0000quire-u_c\u0000'

/** The Transmit channel of one user's server -> client messages. */
export const userChannel = (code: string) => `users/${code}`

/**
 * Where server -> client messages go: the sockets of this process, the other
 * instances (Redis pub/sub, when configured) and the per-user Transmit
 * channels. Plugins reach it through their manifest's `realtime` binding and
 * through the socket context of their handlers.
 */
export class SocketHub {
  readonly instanceId = randomUUID()
  private byUser = new Map<number, Set<HubConnection>>()
  private inFlight = new Map<
    string,
    { connection: HubConnection; frame: Frame | null; after?: (() => void)[] }
  >()
  private pendingBookUpdates = new Set<number>()
  private bookUpdatesTimer: NodeJS.Timeout | null = null
  private codes = new Map<number, string>()
  private stream: HubStream | null = null
  private bus: HubBus | null = null
  private signalHandlers = new Map<string, ((data: any) => void)[]>()
  /** Bus messages of this turn of the event loop, published together by flushBus. */
  private outgoing: BusMessage[] = []
  private flushScheduled = false
  /** How this instance's own bus messages begin (JSON.stringify writes `o` first): skipped unread. */
  private readonly ownPrefix = `{"o":${JSON.stringify(this.instanceId)},`

  constructor(
    readonly logger: Logger,
    private options: {
      bookUpdatesDelayMs: number
      /** user ids -> codes, for Transmit channels (users/<u_c>). */
      codesOf: (userIds: number[]) => Promise<Map<number, string>>
    }
  ) {}

  /** Cross-instance fan-out; every message published is also delivered locally at once. */
  async useBus(bus: HubBus) {
    this.bus = bus
    await bus.subscribe((raw) => this.receive(raw))
  }

  useStream(stream: HubStream | null) {
    this.stream = stream
  }

  get distributed() {
    return this.bus !== null
  }

  // ---- connections of this process ---------------------------------------------

  index(connection: HubConnection) {
    if (connection.userId === null) return
    let set = this.byUser.get(connection.userId)
    if (!set) this.byUser.set(connection.userId, (set = new Set()))
    set.add(connection)
    if (connection.userCode) this.rememberCode(connection.userId, connection.userCode)
  }

  unindex(connection: HubConnection, userId = connection.userId) {
    if (userId === null) return
    const set = this.byUser.get(userId)
    if (!set) return
    set.delete(connection)
    if (set.size === 0) this.byUser.delete(userId)
  }

  connectionsOf(userId: number): ReadonlySet<HubConnection> {
    return this.byUser.get(userId) ?? new Set()
  }

  get connectedUsers() {
    return this.byUser.size
  }

  // ---- origin of a change: the frames being handled ------------------------------------

  /**
   * The socket server marks each frame while it is handled (one at a time per
   * connection); see frameValidated for what the frame is then.
   */
  frameStarted(connection: HubConnection) {
    this.inFlight.set(connection.id, { connection, frame: null })
  }

  /**
   * The frame a connection is handling, as its handler's validator read it
   * (trimmed text, numbers): what originOf's rating functions see. A frame
   * not validated (yet) has reached no service: it is the origin of nothing.
   */
  frameValidated(connection: HubConnection, frame: Frame) {
    const entry = this.inFlight.get(connection.id)
    if (entry) entry.frame = frame
  }

  /** Called once the frame's answer (ack) has been sent: runs the work deferred to then. */
  frameEnded(connection: HubConnection) {
    const entry = this.inFlight.get(connection.id)
    this.inFlight.delete(connection.id)
    for (const work of entry?.after ?? []) this.run(work)
  }

  /**
   * Runs `work` once the frame `origin` is handling has been answered (its
   * ack sent), or on the next turn of the event loop when there is no such
   * frame: a fan-out caused by a frame never holds up that frame's ack.
   */
  afterOrigin(origin: string | null, work: () => void) {
    const entry = origin === null ? undefined : this.inFlight.get(origin)
    if (entry) (entry.after ??= []).push(work)
    else setImmediate(() => this.run(work))
  }

  private run(work: () => void) {
    try {
      work()
    } catch (error) {
      this.logger.error({ err: error }, 'socket hub: deferred work failed')
    }
  }

  /**
   * The connection whose frame caused a change made by `userId` (the
   * principal, as events name their actor), or null (api.php, jobs, another
   * instance). `match` rates each frame of that user being handled: 2 this
   * frame made the change (same uuid, same smid), 1 it may have (a frame
   * naming nothing), 0 not. The first sure frame wins; else the only possible
   * one. Explicit rather than an async context: a change may be written by
   * another frame's work (the books plugin commits concurrent sends together),
   * and AsyncLocalStorage would slow every promise of the process.
   */
  originOf(userId: number, match: (frame: Frame) => number): string | null {
    let possible: string | null = null
    let possibles = 0
    for (const { connection, frame } of this.inFlight.values()) {
      if (frame === null || connection.userId !== userId) continue
      const rating = match(frame)
      if (rating >= 2) return connection.id
      if (rating === 1) {
        possible = connection.id
        possibles++
      }
    }
    return possibles === 1 ? possible : null
  }

  // ---- signals between instances ----------------------------------------------------

  /**
   * Hands `data` to the `topic` handlers of every OTHER instance (and console
   * process subscribed), through the hub's channel; nothing without Redis.
   * For state each instance keeps, such as caches to invalidate: the caller
   * updates its own state itself.
   */
  signal(topic: string, data: unknown) {
    if (this.bus) this.publish({ o: this.instanceId, k: 'signal', t: topic, d: data })
  }

  /** Registers a handler of the signals of `topic` sent by other instances. */
  onSignal<T = unknown>(topic: string, handler: (data: T) => void) {
    const handlers = this.signalHandlers.get(topic) ?? []
    handlers.push(handler)
    this.signalHandlers.set(topic, handlers)
  }

  // ---- delivery ---------------------------------------------------------------------

  /** Sends `frame` to every socket (any instance) and SSE channel of `userIds`. */
  deliver(delivery: Delivery) {
    if (delivery.userIds.length === 0) return
    this.deliverLocally(delivery)
    if (this.bus) this.publish({ o: this.instanceId, k: 'deliver', d: delivery })
    this.streamLocally(delivery)
  }

  /**
   * Book updates ready (type 8) for these users, coalesced: many changes
   * within SOCKET_BOOK_UPDATES_DELAY_MS give each user one frame.
   */
  bookUpdates(userIds: Iterable<number>) {
    for (const id of userIds) this.pendingBookUpdates.add(id)
    if (this.bookUpdatesTimer || this.pendingBookUpdates.size === 0) return
    this.bookUpdatesTimer = setTimeout(
      () => this.flushBookUpdates(),
      this.options.bookUpdatesDelayMs
    )
    this.bookUpdatesTimer.unref?.()
  }

  flushBookUpdates() {
    if (this.bookUpdatesTimer) clearTimeout(this.bookUpdatesTimer)
    this.bookUpdatesTimer = null
    const userIds = [...this.pendingBookUpdates]
    this.pendingBookUpdates.clear()
    this.deliver({ userIds, frame: { type: MessageType.BOOK_UPDATES, u_c: '' }, addressed: true })
  }

  /**
   * Closes the sockets of a user's revoked sessions on every instance
   * (`kept`: the session that stays, or null for all).
   */
  revokeSessions(userId: number, kept: number | null, reason: string, only?: number) {
    this.revokeLocally(userId, kept, reason, only)
    if (this.bus) this.publish({ o: this.instanceId, k: 'revoke', userId, kept, reason, only })
  }

  /**
   * The fan-out loop: synchronous, one serialization per delivery (a shared
   * Buffer), or for an addressed frame one serialization split around the
   * recipient's code.
   */
  private deliverLocally({ userIds, frame, exceptConnection, addressed }: Delivery) {
    let shared: Buffer | null = null
    let head = ''
    let tail = ''
    if (addressed) {
      const text = JSON.stringify({ ...frame, u_c: ADDRESS })
      const at = text.indexOf(JSON.stringify(ADDRESS))
      head = text.slice(0, at)
      tail = text.slice(at + JSON.stringify(ADDRESS).length)
    }
    for (const userId of userIds) {
      const set = this.byUser.get(userId)
      if (!set) continue
      for (const connection of set) {
        if (connection.id === exceptConnection) continue
        if (!addressed) {
          connection.sendRaw((shared ??= Buffer.from(JSON.stringify(frame))))
        } else {
          connection.sendRaw(head + JSON.stringify(connection.userCode) + tail)
        }
      }
    }
  }

  private revokeLocally(userId: number, kept: number | null, reason: string, only?: number) {
    for (const connection of [...(this.byUser.get(userId) ?? [])]) {
      if (kept !== null && connection.sessionId === kept) continue
      if (only !== undefined && connection.sessionId !== only) continue
      connection.close(CloseCode.SESSION_DROPPED, `Session dropped (${reason})`.slice(0, 120))
    }
  }

  /** The SSE side of a delivery, for this instance's subscribers (none: nothing to do). */
  private streamLocally(delivery: Delivery) {
    if (!this.stream || this.stream.subscribedChannels().size === 0) return
    void this.streamOut(delivery)
  }

  private async streamOut({ userIds, frame, addressed }: Delivery) {
    try {
      const codes = await this.codesFor(userIds)
      const channels = this.stream!.subscribedChannels()
      for (const userId of userIds) {
        const code = codes.get(userId)
        if (!code) continue
        const channel = userChannel(code)
        if (!channels.has(channel)) continue
        this.stream!.broadcast(channel, addressed ? { ...frame, u_c: code } : frame)
      }
    } catch (error) {
      this.logger.error({ err: error }, 'socket hub: Transmit publication failed')
    }
  }

  private rememberCode(userId: number, code: string) {
    if (this.codes.size > 100_000) this.codes.clear()
    this.codes.set(userId, code)
  }

  private async codesFor(userIds: number[]) {
    const missing = userIds.filter((id) => !this.codes.has(id))
    if (missing.length) {
      for (const [id, code] of await this.options.codesOf(missing)) this.rememberCode(id, code)
    }
    return this.codes
  }

  /**
   * Queues `message` for the bus: the messages of one turn of the event loop go out as one bus
   * message (k 'batch', in order) on the next turn. A group-committed batch of sends emits
   * its messages' fan-outs in one turn (one immediate each); published one by one, each cost a
   * Redis command on this instance and a message to read on every other (this one included: it
   * is subscribed to its own channel), about a sixth of a sendMsg's server CPU on MariaDB +
   * Redis. A flush is on the next turn rather than a microtask or tick: those run between the
   * immediates of one turn, so they would publish each fan-out alone.
   */
  private publish(message: BusMessage) {
    this.outgoing.push(message)
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => void this.flushBus())
  }

  /** Publishes the queued bus messages (one, or a batch of them). */
  private flushBus(): Promise<unknown> {
    this.flushScheduled = false
    const messages = this.outgoing
    if (messages.length === 0 || !this.bus) return Promise.resolve()
    this.outgoing = []
    const message: BusMessage =
      messages.length === 1 ? messages[0] : { o: this.instanceId, k: 'batch', m: messages }
    return this.bus.publish(JSON.stringify(message)).catch((error) => {
      this.logger.error({ err: error }, 'socket hub: Redis publish failed')
    })
  }

  /** A message of the bus, or relayed by the web process's detached outbox sender. */
  receive(raw: string) {
    // This instance's own messages come back from the channel: nothing to do, nothing to parse.
    if (raw.startsWith(this.ownPrefix)) return
    let message: BusMessage
    try {
      message = JSON.parse(raw)
    } catch {
      return
    }
    this.handle(message)
  }

  private handle(message: BusMessage) {
    if (message.o === this.instanceId) return
    if (message.k === 'batch') {
      if (Array.isArray(message.m)) for (const each of message.m) this.handle(each)
    } else if (message.k === 'deliver') {
      this.deliverLocally(message.d)
      this.streamLocally(message.d)
    } else if (message.k === 'revoke') {
      this.revokeLocally(message.userId, message.kept, message.reason, message.only)
    } else if (message.k === 'signal') {
      for (const handler of this.signalHandlers.get(message.t) ?? []) {
        try {
          handler(message.d)
        } catch (error) {
          this.logger.error({ err: error, topic: message.t }, 'socket hub: signal handler failed')
        }
      }
    }
  }

  async shutdown() {
    if (this.bookUpdatesTimer) clearTimeout(this.bookUpdatesTimer)
    this.bookUpdatesTimer = null
    // What this turn queued still goes out (a console process publishes, then stops).
    await this.flushBus()
    await this.bus?.close?.()
    this.bus = null
  }
}
