/**
 * The sends in flight in one process. The pump claims only as many deliveries
 * as it has room for, so a receiver that hangs until the timeout holds its own
 * share (`perRecipient`) and never the room every other recipient needs, and
 * the process never opens more than `total` connections at once.
 */
export class SendSlots {
  private inFlight = 0
  private byRecipient = new Map<string, number>()

  constructor(private limits: { total: number; perRecipient: number }) {}

  /** Sends that may start now in all. */
  get room() {
    return Math.max(0, this.limits.total - this.inFlight)
  }

  /** Sends that may start now for one recipient. */
  roomFor(recipient: string) {
    return Math.max(0, this.limits.perRecipient - (this.byRecipient.get(recipient) ?? 0))
  }

  /** Recipients with no room left (the pump does not claim their deliveries). */
  saturated(): string[] {
    const full: string[] = []
    for (const [recipient, count] of this.byRecipient)
      if (count >= this.limits.perRecipient) full.push(recipient)
    return full
  }

  acquire(recipient: string) {
    this.inFlight++
    this.byRecipient.set(recipient, (this.byRecipient.get(recipient) ?? 0) + 1)
  }

  release(recipient: string) {
    this.inFlight--
    const mine = (this.byRecipient.get(recipient) ?? 1) - 1
    if (mine > 0) this.byRecipient.set(recipient, mine)
    else this.byRecipient.delete(recipient)
  }

  /** Sends in flight now (tests, and a graceful stop). */
  get active() {
    return this.inFlight
  }
}
