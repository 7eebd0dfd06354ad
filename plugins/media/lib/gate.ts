/**
 * At most `limit` holders at once, and no queue: a caller past the bound is
 * told so at once (null) and answers "busy" rather than waiting in a line
 * that could grow without end. The media plugin bounds sharp's work with it.
 */
export class Gate {
  private held = 0

  constructor(readonly limit: number) {}

  /** A release function, or null when `limit` holders are in. */
  tryEnter(): (() => void) | null {
    if (this.held >= this.limit) return null
    this.held++
    let released = false
    return () => {
      if (released) return
      released = true
      this.held--
    }
  }

  get active() {
    return this.held
  }
}
