import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * In-transaction topics: a writer announces a change inside its transaction
 * (`outbox.stage(trx, topic, event)`), every plugin that contributed to that
 * topic answers the deliveries it causes, and those rows are inserted in the
 * same transaction. Plugins add their topics by augmenting this interface
 * (like AdonisJS's EventsList): `declare module '#core/outbox/types' { interface OutboxTopics { ... } }`.
 */
export interface OutboxTopics {}

export type OutboxTopic = keyof OutboxTopics & string

/** One delivery to write: a channel, a recipient, what to send. */
export interface OutboxEntry {
  /** A registered channel adapter (`webhook`, later `fcm`, `smtp`, ...). */
  channel: string
  /** Who receives it, in the channel's terms (a subscription id, a device id, an address). */
  recipient: string
  /**
   * Unique per channel: a second entry with the same key is not written
   * (the recipient gets a change once even when a writer stages it twice).
   */
  idempotencyKey: string
  /**
   * Deliveries with the same order key are sent one after the other, in the
   * order they were written (a row's later change never overtakes its earlier one).
   */
  orderKey?: string | null
  /** What the event is, for the log and the console (`row.updated`). */
  eventType: string
  /** JSON the channel adapter sends (or builds its request from). */
  payload: unknown
  /** Attempts in all; default OUTBOX_MAX_ATTEMPTS. */
  maxAttempts?: number
  /**
   * Not sent before this time (epoch ms): a reminder written now for later.
   * The row waits in the table (its job is dispatched delayed; the sweeper
   * dispatches it again if that job is lost), so a restart loses nothing.
   */
  notBefore?: number
}

/** A delivery row as a channel adapter receives it. */
export interface OutboxDelivery {
  id: number
  channel: string
  recipient: string
  idempotencyKey: string
  orderKey: string | null
  eventType: string
  payload: any
  state: DeliveryState
  /** This attempt's number, first = 1. */
  attempt: number
  maxAttempts: number
  createdAt: number
}

export type DeliveryState = 'pending' | 'sending' | 'delivered' | 'failed' | 'cancelled'

/**
 * What one attempt came to. `retry` is retried with backoff until the
 * delivery's attempts are used up (then `failed`); `failed` is final at once
 * (410 Gone); `cancelled` means there is nobody to send to any more (the
 * subscription was deleted or disabled).
 */
export interface AttemptResult {
  outcome: 'delivered' | 'retry' | 'failed' | 'cancelled'
  /** The provider's answer: an HTTP status, or null when none came. */
  status?: number | null
  /** A bounded excerpt of the answer (the adapter bounds it). */
  response?: string | null
  /** Why it failed, for the log (never a secret). */
  error?: string | null
  /**
   * What the send tells the channel's hooks (onDelivered, onFailed), which
   * may run in another process than the send (the web process's sender):
   * plain JSON, never kept in the log.
   */
  note?: Record<string, unknown>
  /**
   * The send was lost with the process running it (the web process's sender
   * died): tried again soon, not counted against maxAttempts (the receiver
   * did nothing wrong). It may have gone out: at least once, as after a crash.
   */
  unsent?: boolean
}

/** Sends deliveries of one channel. Registered by the plugin that owns the channel. */
export interface OutboxChannel {
  /**
   * Optional: called once for the deliveries of this channel claimed
   * together, before their sends (one read for the batch instead of one per
   * delivery); what it answers is given to each of their `send` calls.
   */
  prepare?(deliveries: OutboxDelivery[]): Promise<unknown>
  send(delivery: OutboxDelivery, prepared?: unknown): Promise<AttemptResult>
  /** The delivery failed for good (attempts used up, or a final refusal). */
  onFailed?(delivery: OutboxDelivery, result: AttemptResult): Promise<void>
  /** The delivery got through (a subscription's failure count resets). */
  onDelivered?(delivery: OutboxDelivery, result: AttemptResult): Promise<void>
}

/** A plugin's part in an in-transaction topic. */
export interface OutboxContributor<E> {
  /**
   * Cheap and synchronous: whether this event may cause deliveries at all. A
   * writer may skip work (reading old values, opening a transaction) when no
   * contributor wants the event, so a false answer must be right; true may be
   * wrong (entries() then answers nothing). Writers ask before they have
   * the whole event (before reading old values): what they know is given.
   */
  wants(event: Partial<E>): boolean
  /**
   * Optional, read before the writer's transaction (committed data, any connection): whether
   * entries() may answer anything for events like `event` (what the writer knows so far).
   * False must be right; true may be wrong. A writer told false by every contributor that
   * wants the event may write without staging, in a single statement (no BEGIN/COMMIT round
   * trips). Without it, a contributor that wants the event is taken to stage.
   */
  mayStage?(event: Partial<E>): Promise<boolean>
  /**
   * Inside the writer's transaction: the deliveries this change causes.
   * `afterCommit` is the writer's, for a contributor that also writes rows
   * of its own there (an SMS queue) and wakes someone once they are committed.
   * For `tables:rows_changed` and `books:message_changed`, plain statements
   * only (readQuery, writeQuery, trxQuery of app/core/native_sql.ts): their
   * hot writers (CellWriter, MessageWriter's new messages) begin the
   * transaction on the driver (StampService.writeNative), and `client` then
   * has no query builder.
   */
  entries(
    event: E,
    client: QueryClientContract,
    afterCommit: (callback: () => unknown) => void
  ): Promise<OutboxEntry[]>
}
