import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor, OutboxEntry } from '#core/outbox/types'
import type { RowsChanging } from '#plugins/tables/events'
import { CHANNEL, recipientOf, type WebhookRow } from './webhook_service.js'
import type { SubscriptionIndex } from './subscription_index.js'

/** The body of every delivery (Standard Webhooks' recommended shape). */
export interface WebhookPayload {
  type: string
  timestamp: string
  data: Record<string, unknown> & { webhookId: number; idempotencyKey: string }
}

/**
 * Whether a table write fires webhooks: socket writes (type 13) do; api.php
 * writes only when the client sent bypassUrlTrigger=false (the live
 * product's default, spec 4.A.6 and client-facts); the recompute of other
 * tables' captions never does (it is sent with bypassUrlTrigger true).
 */
export function fires(event: Partial<Pick<RowsChanging, 'source' | 'bypassUrlTrigger'>>) {
  return event.source === 'socket' || event.bypassUrlTrigger === false
}

async function codes(client: QueryClientContract, ids: (number | null)[]) {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
  const rows = wanted.length
    ? await client.from('users').whereIn('id', wanted).select('id', 'code')
    : []
  return new Map(rows.map((row) => [Number(row.id), String(row.code)]))
}

const listOf = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)

/**
 * The webhooks plugin's part in `tables:rows_changed` (in the write's
 * transaction): one delivery per subscription and row, `row.created`,
 * `row.updated` or `row.deleted`, with the fields written (old and new
 * values), ordered per subscription and row.
 */
export function rowsContributor(index: SubscriptionIndex): OutboxContributor<RowsChanging> {
  return {
    wants: (event) => fires(event) && index.hasCategory(event.categoryId),
    async entries(event, client) {
      const subscriptions = (await client
        .from('webhooks')
        .where('category_id', event.categoryId)
        .where('active', true)) as WebhookRow[]
      if (subscriptions.length === 0) return []
      const users = await codes(client, [event.actorId, event.onBehalfOf])
      const kindOf = (id: number) =>
        event.created.includes(id)
          ? 'row.created'
          : event.deleted.includes(id)
            ? 'row.deleted'
            : 'row.updated'
      const timestamp = new Date().toISOString()
      const entries: OutboxEntry[] = []
      for (const subscription of subscriptions) {
        const events = listOf(subscription.events)
        const only = listOf(subscription.field_ids).map(Number)
        for (const change of event.changes) {
          const type = kindOf(change.id)
          if (!events.includes(type)) continue
          // fieldIds: only changes of those fields (a deletion concerns every field).
          if (
            only.length &&
            type !== 'row.deleted' &&
            !change.fields.some((field) => only.includes(field.fieldId))
          )
            continue
          const idempotencyKey = `wh${subscription.id}.${type}.${change.id}.${event.stamp}`
          const payload: WebhookPayload = {
            type,
            timestamp,
            data: {
              webhookId: Number(subscription.id),
              idempotencyKey,
              book: { b_o: event.b_o, b_c: event.b_c },
              table: { catId: event.categoryId, name: event.catName },
              rowId: change.id,
              fields: change.fields,
              actor: {
                u_c: users.get(event.actorId) ?? null,
                onBehalfOf:
                  event.onBehalfOf === null ? null : (users.get(event.onBehalfOf) ?? null),
              },
              sstamp: event.stamp,
              source: event.source,
            },
          }
          entries.push({
            channel: CHANNEL,
            recipient: recipientOf(Number(subscription.id)),
            idempotencyKey,
            orderKey: `wh${subscription.id}.row.${change.id}`,
            eventType: type,
            payload,
          })
        }
      }
      return entries
    },
  }
}
