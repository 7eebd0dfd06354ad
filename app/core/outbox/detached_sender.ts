import { fork, type ChildProcess } from 'node:child_process'
import { setPriority } from 'node:os'
import type { Logger } from '@adonisjs/core/logger'

/** What the web process and its sender say to each other over the IPC channel. */
export type SenderMessage =
  /** web → sender: look for due deliveries until `until` (a kick), taking back lapsed claims. */
  | { outbox: 'kick'; until: number; reclaim: boolean }
  /** sender → web: booted and pumping; kicks may be sent. */
  | { outbox: 'ready' }
  /** sender → web: a socket hub message (a system message, an alarm) for this process's clients. */
  | { outbox: 'hub'; raw: string }

export interface DetachedSenderOptions {
  /** The ace entry point to fork (`ace.js` of the checkout or of the build). */
  aceScript: string
  /** The sender's niceness (0 = the web process's priority, 19 = only idle CPU). */
  nice: number
  logger: Logger
  /** A hub message relayed by the sender, for this process's sockets and streams. */
  relay: (raw: string) => void
}

/** Restarts closer together than this count as a crash loop. */
const CRASH_WINDOW_MS = 60_000
/** After this many crashes in a row within the window, the web process sends itself. */
const CRASHES_BEFORE_FALLBACK = 3
const RESTART_DELAY_MS = 1_000
const STOP_GRACE_MS = 10_000

/**
 * The embedded default's sending process (OUTBOX_SENDER=process): with the
 * in-process queue, the web process forks `node ace outbox:send`, a process
 * of its own at a lower CPU priority that owns the outbox pump, so sending
 * deliveries (HTTP, SMTP, push) never takes the web process's CPU: a write
 * pays for staging its rows and nothing else. Kicks go to it over the IPC
 * channel, one per window; the hub messages it makes (system messages, web
 * alarms) come back the same way for this process's sockets. It is restarted
 * when it dies; a crash loop hands sending back to the web process (logged).
 * Deliveries are never lost meanwhile: they wait in the table for the next
 * pump (the sweeper kicks again), as after any crash.
 */
export class DetachedSender {
  private child: ChildProcess | null = null
  private ready = false
  /** A kick asked for while the sender was (re)starting: sent once it is ready. */
  private pendingKick: { until: number; reclaim: boolean } | null = null
  private lastKickWindow = -1
  private crashes: number[] = []
  private stopping = false
  private restartTimer: NodeJS.Timeout | null = null

  constructor(
    private options: DetachedSenderOptions,
    /** Called when the sender cannot be kept alive: the web process pumps again. */
    private onGiveUp: () => void
  ) {}

  get pid() {
    return this.child?.pid
  }

  get alive() {
    return this.child !== null && this.ready
  }

  start() {
    this.stopping = false
    const child = fork(this.options.aceScript, ['outbox:send'], {
      // The ace script registers what it needs (the TypeScript loader in a checkout): the web
      // process's own flags (a profiler, hot reload) are not the sender's.
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.child = child
    this.ready = false
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

  /** Makes the sender look for due deliveries until `until` (one message per kick window). */
  kick(until: number, reclaim: boolean) {
    if (!this.ready) {
      this.pendingKick = {
        until: Math.max(until, this.pendingKick?.until ?? 0),
        reclaim: reclaim || !!this.pendingKick?.reclaim,
      }
      return
    }
    if (until === this.lastKickWindow && !reclaim) return
    this.lastKickWindow = until
    this.send({ outbox: 'kick', until, reclaim })
  }

  /** Stops the sender: it finishes its sends in flight and writes their attempts, then exits. */
  async stop() {
    this.stopping = true
    if (this.restartTimer) clearTimeout(this.restartTimer)
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
    if (message.outbox === 'ready') {
      this.ready = true
      this.crashes = []
      this.options.logger.info({ pid: this.child?.pid }, 'outbox sender: ready')
      const pending = this.pendingKick
      this.pendingKick = null
      if (pending) this.send({ outbox: 'kick', until: pending.until, reclaim: pending.reclaim })
    } else if (message.outbox === 'hub' && typeof message.raw === 'string') {
      this.options.relay(message.raw)
    }
  }

  private send(message: SenderMessage) {
    const child = this.child
    if (!child?.connected) return
    // A message lost with a dying sender is a kick: the new sender's first claim, or the
    // sweeper, finds the rows it was about.
    child.send(message, (error) => {
      if (error) this.options.logger.debug({ err: error }, 'outbox sender: kick not delivered')
    })
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) {
    if (this.child === child) {
      this.child = null
      this.ready = false
    }
    if (this.stopping) return
    const now = Date.now()
    this.crashes = [...this.crashes.filter((at) => now - at < CRASH_WINDOW_MS), now]
    if (this.crashes.length >= CRASHES_BEFORE_FALLBACK) {
      this.options.logger.error(
        { code, signal, crashes: this.crashes.length },
        'outbox sender: keeps dying; this process sends deliveries itself from now on'
      )
      this.onGiveUp()
      return
    }
    this.options.logger.warn({ code, signal }, 'outbox sender: exited; restarting it')
    // Its first claim takes what it left due; claims it held lapse and the sweeper has them sent.
    this.pendingKick = { until: 0, reclaim: false }
    this.restartTimer = setTimeout(() => this.start(), RESTART_DELAY_MS)
    this.restartTimer.unref()
  }
}
