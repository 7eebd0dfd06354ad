import { performance } from 'node:perf_hooks'
import { foreground as processForeground, type Foreground } from '#core/foreground'

export interface WritesFirstSettings {
  /** Deliveries a second this process's pump may still claim while writes saturate it. */
  saturatedRate: number
  /** The event loop's busy share (0-1) from which writes saturate the process. */
  threshold: number
}

/**
 * "Writes first" (docs/outbox.md): while writes saturate this process, its
 * pump claims at most `saturatedRate` deliveries a second (a token bucket
 * holding a fifth of a second's worth, claimed when full: a claim costs about
 * the same for one row as for twenty), so deliveries never slow the writes
 * that cause them; they go on at that pace and catch up at full speed once
 * the writes let up. Otherwise the pump claims all it has room for.
 */
export class WritesFirst {
  private tokens: number
  private refilledAt = performance.now()
  private limited = false

  constructor(
    private settings: WritesFirstSettings,
    private load: Foreground = processForeground
  ) {
    this.tokens = this.capacity
  }

  private get capacity() {
    return Math.max(1, this.settings.saturatedRate / 5)
  }

  /** How many of `wanted` deliveries may be claimed now (0: wait `retryMs()`). */
  allowance(wanted: number): number {
    const now = performance.now()
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.refilledAt) * this.settings.saturatedRate) / 1000
    )
    this.refilledAt = now
    this.limited = this.load.saturated(this.settings.threshold)
    if (!this.limited) return wanted
    // A claim costs about as much for one row as for twenty: claim when the bucket is full.
    return this.tokens >= Math.min(wanted, this.capacity)
      ? Math.min(wanted, Math.floor(this.tokens))
      : 0
  }

  /** The claim took `count` deliveries: they count against the share while saturated. */
  took(count: number) {
    if (this.limited) this.tokens -= count
  }

  /** When to ask again after an allowance of 0: when the bucket is full again. */
  retryMs() {
    const missing = Math.max(0, this.capacity - this.tokens)
    return Math.max(10, Math.ceil((missing * 1000) / this.settings.saturatedRate))
  }
}
