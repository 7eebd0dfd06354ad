import WebSocket from 'ws'
import app from '@adonisjs/core/services/app'
import { serverUrl } from '#tests/helpers/server'
import type { Session } from '#tests/helpers/users'
import { SocketServer } from '#core/socket/socket_server'

/**
 * The test HTTP server is started by test utils, not by the web ignitor whose
 * ready hook attaches the socket endpoint: attach it here (idempotent).
 */
export async function ensureSocketEndpoint() {
  const server = await app.container.make('server')
  const socket = await app.container.make(SocketServer)
  socket.attach(server.getNodeServer() as any)
  return socket
}

/** What a socket client sends with each frame. */
export type Credentials = Pick<Session, 'o_u' | 'sesskey'>

export interface Closed {
  code: number
  reason: string
}

/** A real ws client that records every frame it receives. */
export class TestSocket {
  readonly frames: Record<string, any>[] = []
  readonly closed: Promise<Closed>
  private waiters: {
    match: (frame: Record<string, any>) => boolean
    resolve: (frame: Record<string, any>) => void
  }[] = []

  constructor(
    readonly ws: WebSocket,
    readonly session?: Credentials
  ) {
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))
    )
    ws.on('message', (data) => {
      let frame: Record<string, any>
      try {
        frame = JSON.parse(data.toString())
      } catch {
        frame = { unparsable: data.toString() }
      }
      this.frames.push(frame)
      for (const waiter of [...this.waiters]) {
        if (waiter.match(frame)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1)
          waiter.resolve(frame)
        }
      }
    })
  }

  /** Sends a frame; with a session, o_u/u_c/sesskey are added unless the frame sets them. */
  send(frame: Record<string, unknown> | string) {
    if (typeof frame === 'string') return this.ws.send(frame)
    const credentials = this.session
      ? { o_u: this.session.o_u, u_c: this.session.o_u, sesskey: this.session.sesskey }
      : {}
    this.ws.send(JSON.stringify({ ...credentials, ...frame }))
  }

  /** The first frame (already received or to come) matching `match`. */
  next(
    match: (frame: Record<string, any>) => boolean,
    timeoutMs = 3000,
    what = 'a frame'
  ): Promise<Record<string, any>> {
    const seen = this.frames.find(match)
    if (seen) {
      this.frames.splice(this.frames.indexOf(seen), 1)
      return Promise.resolve(seen)
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (frame: Record<string, any>) => {
          clearTimeout(timer)
          this.frames.splice(this.frames.indexOf(frame), 1)
          resolve(frame)
        },
      }
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1)
        reject(new Error(`Timed out waiting for ${what}; received: ${JSON.stringify(this.frames)}`))
      }, timeoutMs)
      this.waiters.push(waiter)
    })
  }

  ofType(type: number, timeoutMs?: number) {
    return this.next((frame) => frame.type === type, timeoutMs, `a frame of type ${type}`)
  }

  /** Resolves true when no frame matching `match` arrives within `ms`. */
  async none(match: (frame: Record<string, any>) => boolean, ms = 300) {
    try {
      await this.next(match, ms)
      return false
    } catch {
      return true
    }
  }

  /**
   * Attaches (type 7) and waits for the attach's answer (a type 8 for the attached user) and a
   * ping answer, so the attach is known to be done; both are consumed, so a test sees only the
   * frames its own actions cause.
   */
  async attach(type = 7) {
    this.send({ type, version: '6.49' })
    this.send({ type: 9 })
    const pong = await this.ofType(10)
    if (pong.status !== 'ok') throw new Error(`attach failed: ${JSON.stringify(pong)}`)
    await this.ofType(8)
    return this
  }

  close() {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)
      this.ws.close()
    return this.closed
  }
}

export function socketUrl(base = serverUrl()) {
  return `${base.replace(/^http/, 'ws')}/live/socket`
}

/** Opens a socket to the test server (or `base`), optionally with a session's credentials. */
export async function connect(session?: Credentials, base?: string): Promise<TestSocket> {
  return connectTo(socketUrl(base), session)
}

/** Opens a socket to an exact ws:// URL. */
export async function connectTo(url: string, session?: Credentials): Promise<TestSocket> {
  const ws = new WebSocket(url)
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return new TestSocket(ws, session)
}

/** A socket attached as `session`'s user. */
export async function attached(session: Credentials, base?: string) {
  const socket = await connect(session, base)
  return socket.attach()
}
