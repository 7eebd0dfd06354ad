import { closeSync, openSync, readSync } from 'node:fs'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/** How often the event loop's utilization is sampled while writes are being made. */
const SAMPLE_MS = 25
/** Samples looked at: the last 100 ms. */
const WINDOW = 4
/** With no write for this long the sampler stops (an idle server wakes for nothing). */
const IDLE_STOP_MS = 1_000

/**
 * Whether writes saturate this process: the kernel's signal for work that
 * must not slow them (docs/outbox.md, "Writes first"). Every stamped write
 * (StampService) reports its start and end; while writes are being made, the
 * event loop's utilization and, on Linux, the machine's CPU use are sampled
 * every 25 ms. Saturated is either one busy past the threshold: the event
 * loop (this process is the bottleneck) or every core (the CPU a delivery
 * would take is CPU the writers and their clients need; a niced process
 * would wait for it too). Background work (the outbox pump, when writes first
 * is on) asks `saturated()` before each batch and, when it is, holds back
 * what can wait; otherwise it runs at full speed. Nothing is sampled until
 * something asks.
 */
export class Foreground {
  private writing = 0
  private lastWrite = 0
  private samples: number[] = []
  private previous: EventLoopUtilization | null = null
  private sampler: NodeJS.Timeout | null = null
  /** Someone asked (writes first is on): only then is the load sampled. */
  private asked = false

  /** `machine`: the machine's CPU use between two calls (tests pass their own). */
  constructor(private machine: MachineLoad = new MachineCpu()) {}

  beginWrite() {
    this.writing++
    if (this.asked && !this.sampler) this.startSampling()
  }

  endWrite() {
    this.writing--
    this.lastWrite = performance.now()
  }

  /**
   * True while writes are being made (now, or within the last 100 ms) and the
   * event loop, or every core of the machine, was busy at least `threshold`
   * (0-1) of the last 100 ms.
   */
  saturated(threshold: number): boolean {
    if (!this.asked) {
      this.asked = true
      if (this.writing > 0) this.startSampling()
    }
    if (this.writing === 0 && performance.now() - this.lastWrite > SAMPLE_MS * WINDOW) return false
    if (this.samples.length === 0) return false
    let sum = 0
    for (const sample of this.samples) sum += sample
    return sum / this.samples.length >= threshold
  }

  private startSampling() {
    this.previous = performance.eventLoopUtilization()
    this.samples = []
    this.machine.busy()
    this.sampler = setInterval(() => {
      const now = performance.eventLoopUtilization()
      const loop = performance.eventLoopUtilization(now, this.previous!).utilization
      this.samples.push(Math.max(loop, this.machine.busy()))
      if (this.samples.length > WINDOW) this.samples.shift()
      this.previous = now
      if (this.writing === 0 && performance.now() - this.lastWrite > IDLE_STOP_MS) {
        clearInterval(this.sampler!)
        this.sampler = null
        this.samples = []
        this.machine.close()
      }
    }, SAMPLE_MS)
    this.sampler.unref()
  }
}

export interface MachineLoad {
  /** The machine's CPU use (0-1) since the previous call. */
  busy(): number
  close(): void
}

/**
 * The machine's CPU use since the previous call (0-1, all cores), from the first line of
 * /proc/stat (one pread of an fd kept open: about 10 us); 0 where there is no /proc/stat.
 */
class MachineCpu implements MachineLoad {
  private fd: number | null = null
  private unavailable = false
  private buffer = Buffer.alloc(256)
  private lastTotal = 0
  private lastIdle = 0

  busy(): number {
    if (this.unavailable) return 0
    try {
      if (this.fd === null) this.fd = openSync('/proc/stat', 'r')
      const length = readSync(this.fd, this.buffer, 0, this.buffer.length, 0)
      const line = this.buffer.toString('latin1', 0, length)
      // cpu  user nice system idle iowait irq softirq steal ...
      const fields = line.slice(0, line.indexOf('\n')).trim().split(/\s+/).slice(1).map(Number)
      let total = 0
      for (const value of fields.slice(0, 8)) total += value
      const idle = fields[3] + fields[4]
      const spent = total - this.lastTotal
      const busy = this.lastTotal && spent > 0 ? 1 - (idle - this.lastIdle) / spent : 0
      this.lastTotal = total
      this.lastIdle = idle
      return busy
    } catch {
      this.unavailable = true
      return 0
    }
  }

  close() {
    if (this.fd !== null) closeSync(this.fd)
    this.fd = null
    this.lastTotal = 0
  }
}

/** The process's one tracker (writes of every plugin go through StampService). */
export const foreground = new Foreground()
