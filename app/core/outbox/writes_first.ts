import { foreground as processForeground, type Foreground } from '#core/foreground'

export interface WritesFirstSettings {
  /** How long a delivery may wait while writes saturate this process (ms). */
  maxDelayMs: number
  /** The busy share (0-1) from which writes saturate the process (Foreground.saturated). */
  threshold: number
}

/** While deliveries are held back, how often the pump looks for those that waited long enough. */
const HELD_POLL_MS = 50

/**
 * "Writes first" (docs/outbox.md): while writes saturate this process, its
 * pump claims only deliveries that have been due for `maxDelayMs`; the
 * others wait, so a burst of writes is not slowed by the deliveries it
 * causes, and none waits longer than that (plus a poll). Claims held back
 * then take many rows at once when they go, which costs less than one small
 * claim per write. Not saturated: everything due is claimed at once.
 */
export class WritesFirst {
  constructor(
    private settings: WritesFirstSettings,
    private load: Foreground = processForeground
  ) {}

  /** The latest due time a claim made now may take (`now` unless writes saturate the process). */
  dueBy(now: number): number {
    return this.load.saturated(this.settings.threshold) ? now - this.settings.maxDelayMs : now
  }

  /** After a claim held back (dueBy < now): when to look again. */
  retryMs() {
    return Math.min(HELD_POLL_MS, this.settings.maxDelayMs)
  }
}
