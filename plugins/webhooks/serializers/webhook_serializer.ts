import type { Subscription } from '../services/webhook_service.js'

const listOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)

/** A subscription as the webhook operations answer it (never its secret). */
export function serializeWebhook({ row, book }: Subscription) {
  return {
    id: Number(row.id),
    b_o: book.b_o,
    b_c: book.b_c,
    catId: row.category_id === null ? null : Number(row.category_id),
    url: row.url,
    events: listOf(row.events),
    fieldIds: listOf(row.field_ids).map(Number),
    description: row.description,
    active: Boolean(Number(row.active)),
    triggerUpdateUrl: Boolean(Number(row.is_trigger_url)),
    disabledReason: row.disabled_reason,
    consecutiveFailures: Number(row.consecutive_failures),
    created: Math.floor(Number(row.created_at) / 1000),
    lastModified: Math.floor(Number(row.updated_at) / 1000),
  }
}

/** A delivery of the log, with its attempts (getWebhookDeliveries). */
export function serializeDelivery(row: Record<string, any>, attempts: Record<string, any>[]) {
  return {
    deliveryId: Number(row.id),
    webhookId: Number(String(row.recipient).slice(3)),
    type: row.event_type,
    idempotencyKey: row.idempotency_key,
    status: row.state,
    attempts: Number(row.attempts),
    responseCode: row.last_status === null ? null : Number(row.last_status),
    error: row.last_error,
    durationMs: row.last_duration_ms === null ? null : Number(row.last_duration_ms),
    created: Math.floor(Number(row.created_at) / 1000),
    nextAttempt: row.state === 'pending' ? Math.floor(Number(row.next_attempt_at) / 1000) : null,
    finished: row.finished_at === null ? null : Math.floor(Number(row.finished_at) / 1000),
    log: attempts.map((attempt) => ({
      attempt: Number(attempt.attempt),
      outcome: attempt.outcome,
      responseCode: attempt.status === null ? null : Number(attempt.status),
      response: attempt.response,
      error: attempt.error,
      durationMs: Number(attempt.duration_ms),
      at: Math.floor(Number(attempt.started_at) / 1000),
    })),
  }
}
