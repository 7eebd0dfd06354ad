import { QuireError, type Credentials } from './runtime.js'
import { SOCKET_FRAMES, type SocketFrameTypes } from './generated.js'

/*
 * The realtime channel (docs/socket.md): a WebSocket at `<prefix>/socket`.
 * Browsers have WebSocket; Node 20 has none, so the `ws` package is loaded
 * there (or pass your own constructor).
 */

/** What the socket needs of a WebSocket: the browser's API, which `ws` implements too. */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((event: any) => void) | null
  onmessage: ((event: { data: any }) => void) | null
  onclose: ((event: { code: number; reason: string }) => void) | null
  onerror: ((event: any) => void) | null
}

export type WebSocketConstructor = new (url: string) => WebSocketLike

/** A server-to-client frame (docs/socket.md; /live/asyncapi.json lists them). */
export interface ServerFrame {
  type: number
  status?: 'ok' | 'nok'
  uuid?: string
  errorCode?: string
  errorMsg?: string
  [field: string]: any
}

export interface SocketOptions {
  /** ws:// or wss:// URL (default: the client's origin and prefix, `/socket`). */
  url: string
  credentials: () => Credentials | null
  version?: string | null
  /** Reconnect after a drop (not after close() or a revoked session, code 4001). Default true. */
  reconnect?: boolean
  /** First reconnect delay in ms, doubled up to 10 s (default 500). */
  reconnectDelayMs?: number
  /** How long an ack may take (default 15 s). */
  ackTimeoutMs?: number
  WebSocket?: WebSocketConstructor
}

type Listener = (frame: ServerFrame) => void
type Waiter = { resolve: (frame: ServerFrame) => void; reject: (error: Error) => void }

/** Frames the server answers with an ack of their own: type 1 -> 2, 11 -> 12, 9 -> 10. */
const ACK_TYPES: Record<number, number> = { 1: 2, 11: 12, 9: 10 }

/** Close code of a revoked session (docs/socket.md): reconnecting would be refused. */
export const REVOKED_CLOSE_CODE = 4001

async function defaultWebSocket(): Promise<WebSocketConstructor> {
  const global = (globalThis as any).WebSocket
  if (global) return global as WebSocketConstructor
  // Node 20 has no global WebSocket. The name is a variable so browser bundlers leave it alone.
  const name = 'ws'
  const module = await import(/* @vite-ignore */ name)
  return (module.WebSocket ?? module.default) as WebSocketConstructor
}

let uuidCounter = 0
function newUuid(): string {
  const crypto = (globalThis as any).crypto
  if (crypto?.randomUUID) return crypto.randomUUID()
  return `c${Date.now().toString(36)}${++uuidCounter}`
}

/**
 * One connection that attaches on open (type 7 with the client's keys),
 * adds the keys to every frame, matches acks to their frames by uuid, and
 * reconnects (and attaches again) after a drop.
 */
export class QuireSocket {
  private ws: WebSocketLike | null = null
  private listeners = new Map<number | '*', Set<Listener>>()
  private waiters = new Map<string, Waiter & { timer: ReturnType<typeof setTimeout> }>()
  private pings: (Waiter & { timer: ReturnType<typeof setTimeout> })[] = []
  private closedByUser = false
  private attempts = 0
  private opening: Promise<void> | null = null
  /** Resolves on the first type 8 after each attach. */
  private attachedWaiters: Waiter[] = []
  attached = false

  constructor(private options: SocketOptions) {}

  /** Connects and attaches; resolves once the server answered the attach (type 8). */
  async connect(): Promise<this> {
    this.closedByUser = false
    await this.open()
    return this
  }

  private open(): Promise<void> {
    this.opening ??= this.openOnce().finally(() => (this.opening = null))
    return this.opening
  }

  private async openOnce(): Promise<void> {
    const Constructor = this.options.WebSocket ?? (await defaultWebSocket())
    const ws = new Constructor(this.options.url)
    this.ws = ws
    this.attached = false
    const attached = new Promise<ServerFrame>((resolve, reject) =>
      this.attachedWaiters.push({ resolve, reject })
    )
    // Awaited only once the socket opened: a drop before that is reported by the open.
    attached.catch(() => {})
    ws.onmessage = (event) => this.receive(event.data)
    ws.onclose = (event) => this.dropped(ws, event.code)
    ws.onerror = () => {}
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve()
      ws.onclose = (event) => {
        reject(new Error(`socket closed before opening (${event.code})`))
        this.dropped(ws, event.code)
      }
    })
    ws.onclose = (event) => this.dropped(ws, event.code)
    this.attempts = 0
    this.sendRaw({ type: 7 })
    await attached
  }

  private receive(data: unknown) {
    let frame: ServerFrame
    try {
      frame = JSON.parse(typeof data === 'string' ? data : String(data))
    } catch {
      return
    }
    if (frame.type === 8 && !this.attached) {
      this.attached = true
      this.attachedWaiters.splice(0).forEach((waiter) => waiter.resolve(frame))
    }
    if (frame.type === 0 && !this.attached && (frame.reqType === 7 || frame.reqType === 4)) {
      const error = new QuireError('attach', { ...frame, status: 'nok' })
      this.attachedWaiters.splice(0).forEach((waiter) => waiter.reject(error))
    }
    if (frame.uuid && this.waiters.has(frame.uuid) && [0, 2, 12].includes(frame.type)) {
      const waiter = this.waiters.get(frame.uuid)!
      this.waiters.delete(frame.uuid)
      clearTimeout(waiter.timer)
      if (frame.status === 'nok' || frame.type === 0) {
        waiter.reject(new QuireError(`socket type ${frame.reqType ?? ''}`.trim(), frame as any))
      } else waiter.resolve(frame)
    }
    if (frame.type === 10) {
      const waiter = this.pings.shift()
      if (waiter) {
        clearTimeout(waiter.timer)
        waiter.resolve(frame)
      }
    }
    for (const key of [frame.type, '*'] as const) {
      this.listeners.get(key)?.forEach((listener) => listener(frame))
    }
  }

  private dropped(ws: WebSocketLike, code: number) {
    if (this.ws !== ws) return
    this.ws = null
    this.attached = false
    const error = new Error(`socket closed (${code})`)
    this.attachedWaiters.splice(0).forEach((waiter) => waiter.reject(error))
    for (const waiter of this.waiters.values()) {
      clearTimeout(waiter.timer)
      waiter.reject(error)
    }
    this.waiters.clear()
    this.pings.splice(0).forEach((waiter) => {
      clearTimeout(waiter.timer)
      waiter.reject(error)
    })
    this.listeners.get(-1)?.forEach((listener) => listener({ type: -1, code }))
    const reconnect = this.options.reconnect ?? true
    if (this.closedByUser || !reconnect || code === REVOKED_CLOSE_CODE) return
    const delay = Math.min((this.options.reconnectDelayMs ?? 500) * 2 ** this.attempts++, 10_000)
    setTimeout(() => {
      if (!this.closedByUser) this.open().catch(() => {})
    }, delay)
  }

  /** Listens to server frames of one type ('*': all; -1: the connection closed, with `code`). */
  on(type: number | '*', listener: Listener): () => void {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set())
    this.listeners.get(type)!.add(listener)
    return () => this.listeners.get(type)?.delete(listener)
  }

  /** The next frame of this type (e.g. 8, book updates ready), within `timeoutMs`. */
  next(type: number, timeoutMs = this.options.ackTimeoutMs ?? 15_000): Promise<ServerFrame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off()
        reject(new Error(`no frame of type ${type} within ${timeoutMs} ms`))
      }, timeoutMs)
      const off = this.on(type, (frame) => {
        clearTimeout(timer)
        off()
        resolve(frame)
      })
    })
  }

  private sendRaw(frame: Record<string, unknown>) {
    if (!this.ws || this.ws.readyState !== 1) throw new Error('socket not open')
    const keys = this.options.credentials()
    const envelope: Record<string, unknown> = {}
    if (keys?.sesskey) {
      envelope.o_u = keys.o_u
      if (keys.u_c) envelope.u_c = keys.u_c
      envelope.sesskey = keys.sesskey
    }
    if (this.options.version) envelope.version = this.options.version
    this.ws.send(JSON.stringify({ ...envelope, ...frame }))
  }

  /**
   * Sends a frame with the held keys. Frames with an ack (type 1, 11) get a
   * uuid when they have none and resolve with their ack (QuireError on a nok
   * ack or an error frame); a ping (9) resolves with the type 10; other
   * frames resolve once sent (their refusal arrives as a type 0 frame).
   */
  async send(frame: { type: number; [field: string]: unknown }): Promise<ServerFrame | null> {
    if (!this.attached) await this.open()
    const ackType = ACK_TYPES[frame.type]
    const timeoutMs = this.options.ackTimeoutMs ?? 15_000
    if (ackType === 10) {
      const answer = new Promise<ServerFrame>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no ack ping')), timeoutMs)
        this.pings.push({ resolve, reject, timer })
      })
      this.sendRaw(frame)
      return answer
    }
    if (!ackType) {
      this.sendRaw(frame)
      return null
    }
    const uuid = typeof frame.uuid === 'string' && frame.uuid ? frame.uuid : newUuid()
    const answer = new Promise<ServerFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(uuid)
        reject(new Error(`no ack for ${uuid} within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.set(uuid, { resolve, reject, timer })
    })
    this.sendRaw({ ...frame, uuid })
    return answer
  }

  /** A documented client frame by name (generated.ts SOCKET_FRAMES), e.g. `type1`. */
  sendFrame<K extends keyof SocketFrameTypes>(
    name: K,
    payload: SocketFrameTypes[K] & { uuid?: string }
  ): Promise<ServerFrame | null> {
    return this.send({ ...(payload as object), ...SOCKET_FRAMES[name] })
  }

  /** Ping (type 9): resolves with the type 10. */
  ping(): Promise<ServerFrame | null> {
    return this.send({ type: 9 })
  }

  /** Closes for good (no reconnect). */
  close(): void {
    this.closedByUser = true
    const ws = this.ws
    if (ws) ws.close(1000)
  }
}
