/**
 * The sends in flight in one process. The outbox job claims a delivery and
 * starts its send without waiting for the answer, so a queue worker is never
 * held by a receiver: one that hangs until the timeout would otherwise take
 * every worker in turn and delay every other recipient's deliveries.
 *
 * Each recipient has at most `perRecipient` sends at once. A delivery past
 * that waits here, in arrival order, and is started when one of its
 * recipient's sends ends (if the process dies meanwhile nothing is lost: the
 * row is still pending and the sweeper dispatches it again). Past `total`
 * sends in flight, `take` waits for one to end: the queue's workers slow down
 * instead of the process opening ever more connections.
 */
export class SendSlots {
  private inFlight = 0
  private byRecipient = new Map<string, number>()
  private waiting = new Map<string, (() => void)[]>()
  private full: (() => void)[] = []

  constructor(private limits: { total: number; perRecipient: number }) {}

  /**
   * A slot for `recipient`: true once taken (after waiting for the process's
   * total if needed), or false when the recipient already has its share, in
   * which case `later` runs when one of its sends ends.
   */
  async take(recipient: string, later: () => void): Promise<boolean> {
    while (this.inFlight >= this.limits.total)
      await new Promise<void>((resolve) => this.full.push(resolve))
    const mine = this.byRecipient.get(recipient) ?? 0
    if (mine >= this.limits.perRecipient) {
      const queue = this.waiting.get(recipient) ?? []
      queue.push(later)
      this.waiting.set(recipient, queue)
      return false
    }
    this.inFlight++
    this.byRecipient.set(recipient, mine + 1)
    return true
  }

  /** A send of `recipient` ended (or its claim was lost): the next waiting one starts. */
  release(recipient: string) {
    this.inFlight--
    const mine = (this.byRecipient.get(recipient) ?? 1) - 1
    if (mine > 0) this.byRecipient.set(recipient, mine)
    else this.byRecipient.delete(recipient)
    const queue = this.waiting.get(recipient)
    const next = queue?.shift()
    if (queue && queue.length === 0) this.waiting.delete(recipient)
    next?.()
    this.full.shift()?.()
  }

  /** Sends in flight now (tests, and a graceful stop). */
  get active() {
    return this.inFlight
  }
}
