import { hostname } from 'node:os'
import type { Server } from 'node:http'

/** How often an instance reports itself, and when a silent one counts as gone. */
export const HEARTBEAT_MS = 5_000
export const GONE_AFTER_MS = 20_000
/** A report older than this is removed from the shared hash. */
const FORGET_AFTER_MS = 10 * 60_000

export interface InstanceReport {
  id: string
  host: string
  pid: number
  version: string
  startedAt: number
  lastSeen: number
  sockets: number
  /** Requests per second over the last heartbeat interval. */
  requestsPerSecond: number
  /** Resident memory, bytes. */
  memory: number
}

/** The shared store of reports (a Redis hash); absent without Redis. */
export interface ReportStore {
  put(id: string, report: string): Promise<unknown>
  all(): Promise<Record<string, string>>
  remove(id: string): Promise<unknown>
}

/**
 * This instance's vital signs, and — with Redis — every instance's: each web
 * process writes its report to a shared hash every HEARTBEAT_MS (requests per
 * second counted on its HTTP server, open sockets, memory), and the console's
 * Health page reads them all. An instance that stopped reporting is shown as
 * gone for a while, then forgotten.
 */
export class InstanceRegistry {
  readonly id = `${hostname()}:${process.pid}`
  readonly startedAt = Date.now()
  private requests = 0
  private rate = 0
  private lastTick = Date.now()
  private timer: NodeJS.Timeout | null = null
  private sockets: () => number = () => 0

  constructor(
    private version: string,
    private store: ReportStore | null
  ) {}

  /** Counts the server's requests and starts reporting (web processes). */
  start(server: Server | null, sockets: () => number) {
    this.sockets = sockets
    server?.on('request', () => {
      this.requests++
    })
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS)
    this.timer.unref()
    void this.beat()
  }

  async stop() {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.store?.remove(this.id).catch(() => {})
  }

  /** This instance's report, now. */
  report(): InstanceReport {
    return {
      id: this.id,
      host: hostname(),
      pid: process.pid,
      version: this.version,
      startedAt: this.startedAt,
      lastSeen: Date.now(),
      sockets: this.sockets(),
      requestsPerSecond: this.rate,
      memory: process.memoryUsage.rss(),
    }
  }

  /** Every instance known (this one first), with whether it still reports. */
  async all(): Promise<(InstanceReport & { gone: boolean; self: boolean })[]> {
    const mine = { ...this.report(), gone: false, self: true }
    if (!this.store) return [mine]
    const others: (InstanceReport & { gone: boolean; self: boolean })[] = []
    const now = Date.now()
    for (const [id, raw] of Object.entries(await this.store.all())) {
      if (id === this.id) continue
      const report = parse(raw)
      if (!report) continue
      if (now - report.lastSeen > FORGET_AFTER_MS) {
        await this.store.remove(id)
        continue
      }
      others.push({ ...report, gone: now - report.lastSeen > GONE_AFTER_MS, self: false })
    }
    others.sort((a, b) => a.id.localeCompare(b.id))
    return [mine, ...others]
  }

  private async beat() {
    const now = Date.now()
    const seconds = Math.max(0.001, (now - this.lastTick) / 1000)
    this.rate = Math.round((this.requests / seconds) * 10) / 10
    this.requests = 0
    this.lastTick = now
    await this.store?.put(this.id, JSON.stringify(this.report())).catch(() => {})
  }
}

function parse(raw: string): InstanceReport | null {
  try {
    const report = JSON.parse(raw)
    return typeof report?.lastSeen === 'number' ? report : null
  } catch {
    return null
  }
}
