/**
 * The auth service's notion of "now". Every expiry (tokens, setup tokens,
 * authorization requests, TOTP steps) is computed from it, so tests can move
 * time forward instead of sleeping. One per process: a container singleton
 * (tests resolve it with `app.container.make(Clock)`).
 */
export class Clock {
  private offsetMs = 0
  private frozenAt: number | null = null

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offsetMs
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000)
  }

  /** Moves time forward (or back with a negative value). */
  advance(ms: number) {
    this.offsetMs += ms
  }

  /** Stops time at the current instant (or `at`) until reset(). */
  freeze(at = this.now()) {
    this.offsetMs = 0
    this.frozenAt = at
  }

  reset() {
    this.offsetMs = 0
    this.frozenAt = null
  }
}
