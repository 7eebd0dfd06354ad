import { fork, type ChildProcess } from 'node:child_process'
import { setPriority } from 'node:os'
import type { Logger } from '@adonisjs/core/logger'
import type { RemoteSender } from './outbox_pump.js'
import type { AttemptResult, OutboxDelivery } from './types.js'

/** What the web process and its sender say to each other over the IPC channel. */
export type SenderMessage =
  /** web → sender: send these claimed deliveries of one channel (prepared together). */
  | { outbox: 'send'; channel: string; deliveries: OutboxDelivery[] }
  /** sender → web: booted; deliveries may be handed over. */
  | { outbox: 'ready' }
  /** sender → web: one delivery's send ended. */
  | { outbox: 'ended'; id: number; result: AttemptResult }
  /** sender → web: a send staged deliveries of its own (a reminder's fan-out): look for due ones. */
  | { outbox: 'kick'; at: number; reclaim: boolean }
  /** sender → web: a socket hub message (a system message, an alarm) for this process's clients. */
  | { outbox: 'hub'; raw: string }

export interface DetachedSenderOptions {
  /** The ace entry point to fork (`ace.js` of the checkout or of the build). */
  aceScript: string
  /** The sender's niceness (0 = the web process's priority, 19 = only idle CPU). */
  nice: number
  /** A send not answered within this long is tried again (the outbox's lease: above every channel's timeout). */
  answerTimeoutMs: number
  logger: Logger
  /** A hub message relayed by the sender, for this process's sockets and streams. */
  relay: (raw: string) => void
  /** The sender is ready (again): the pump may claim. */
  onReady: () => void
  /** The sender asked for a kick (deliveries it staged). */
  onKick: (at: number, reclaim: boolean) => void
  /** The sender cannot be kept alive: the web process sends itself again. */
  onGiveUp: () => void
}

/** Restarts closer together than this count as a crash loop. */
const CRASH_WINDOW_MS = 60_000
/** After this many deaths within the window, the web process sends itself. */
const CRASHES_BEFORE_FALLBACK = 3
const RESTART_DELAY_MS = 1_000
const STOP_GRACE_MS = 10_000

/**
 * The embedded default's sending process (OUTBOX_SENDER=process): with the
 * in-process queue, the web process forks `node ace outbox:send`, a process
 * of its own at a lower CPU priority, and hands it the sends themselves
 * (HTTP to receivers, SMTP, push providers: their connections, TLS, JSON and
 * signatures), the CPU-heavy part of a delivery. The web process's pump still
 * claims, logs attempts and runs the channels' hooks: every outbox write stays
 * in one process, so the two never wait for each other's SQLite write lock.
 * The hub messages the sender's channels make (web alarms, gateway wake-ups)
 * come back over the same IPC channel for this process's sockets. A sender
 * that dies is restarted; the sends it had are tried again (at least once);
 * a crash loop hands sending back to the web process (logged).
 */
export class DetachedSender implements RemoteSender {
  private child: ChildProcess | null = null
  private isReady = false
  private inFlight = new Map<number, { resolve: (result: AttemptResult) => void; at: number }>()
  private overdue: NodeJS.Timeout | null = null
  private crashes: number[] = []
  private stopping = false
  private restartTimer: NodeJS.Timeout | null = null

  constructor(private options: DetachedSenderOptions) {}

  get ready() {
    const child = this.child
    return this.isReady && !!child?.connected && child.exitCode === null && !child.killed
  }

  start() {
    this.stopping = false
    // A send the sender never answers (it hangs) must not hold its slot for ever: it counts as
    // an attempt (it may have hung at the receiver).
    this.overdue ??= setInterval(() => {
      const before = Date.now() - this.options.answerTimeoutMs
      for (const [id, entry] of this.inFlight)
        if (entry.at < before)
          this.end(id, { outcome: 'retry', error: 'the sending process did not answer in time' })
    }, 5_000)
    this.overdue.unref()
    const child = fork(this.options.aceScript, ['outbox:send'], {
      // The ace script registers what it needs (the TypeScript loader in a checkout): the web
      // process's own flags (a profiler, hot reload) are not the sender's.
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.child = child
    this.isReady = false
    try {
      if (child.pid) setPriority(child.pid, this.options.nice)
    } catch (error) {
      this.options.logger.warn({ err: error }, 'outbox sender: could not lower its priority')
    }
    child.on('message', (message: SenderMessage) => this.receive(message))
    child.on('error', (error) =>
      this.options.logger.error({ err: error }, 'outbox sender: process error')
    )
    child.once('exit', (code, signal) => this.exited(child, code, signal))
  }

  send(channel: string, deliveries: OutboxDelivery[]): Promise<AttemptResult>[] {
    const child = this.child
    const sends = deliveries.map(
      (delivery) =>
        new Promise<AttemptResult>((resolve) =>
          this.inFlight.set(delivery.id, { resolve, at: Date.now() })
        )
    )
    if (!child?.connected) {
      for (const delivery of deliveries)
        this.end(delivery.id, {
          outcome: 'retry',
          unsent: true,
          error: 'the sending process is not running',
        })
      return sends
    }
    child.send({ outbox: 'send', channel, deliveries } satisfies SenderMessage, (error) => {
      if (!error) return
      for (const delivery of deliveries)
        this.end(delivery.id, {
          outcome: 'retry',
          unsent: true,
          error: 'the sending process did not take it',
        })
    })
    return sends
  }

  /** Stops the sender: it lets its sends in flight end (their results still come back), then exits. */
  async stop() {
    this.stopping = true
    if (this.restartTimer) clearTimeout(this.restartTimer)
    if (this.overdue) clearInterval(this.overdue)
    this.overdue = null
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS)
    await exited
    clearTimeout(timer)
  }

  private receive(message: SenderMessage) {
    if (!message || typeof message !== 'object') return
    switch (message.outbox) {
      case 'ready':
        this.isReady = true
        this.options.logger.info({ pid: this.child?.pid }, 'outbox sender: ready')
        this.options.onReady()
        break
      case 'ended':
        this.end(Number(message.id), message.result)
        break
      case 'kick':
        this.options.onKick(Number(message.at) || Date.now(), message.reclaim === true)
        break
      case 'hub':
        if (typeof message.raw === 'string') this.options.relay(message.raw)
        break
    }
  }

  private end(id: number, result: AttemptResult) {
    const entry = this.inFlight.get(id)
    if (!entry) return
    this.inFlight.delete(id)
    entry.resolve(result)
  }

  /** Every send handed over and not answered is tried again soon (it may have gone out: at least once). */
  private endAll(reason: string) {
    for (const id of [...this.inFlight.keys()])
      this.end(id, { outcome: 'retry', unsent: true, error: reason })
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) {
    if (this.child !== child) return
    this.child = null
    this.isReady = false
    this.endAll('the sending process stopped during the send')
    if (this.stopping) return
    const now = Date.now()
    this.crashes = [...this.crashes.filter((at) => now - at < CRASH_WINDOW_MS), now]
    if (this.crashes.length >= CRASHES_BEFORE_FALLBACK) {
      this.options.logger.error(
        { code, signal, crashes: this.crashes.length },
        'outbox sender: keeps dying; this process sends deliveries itself from now on'
      )
      this.options.onGiveUp()
      return
    }
    this.options.logger.warn({ code, signal }, 'outbox sender: exited; restarting it')
    this.restartTimer = setTimeout(() => this.start(), RESTART_DELAY_MS)
    this.restartTimer.unref()
  }
}
