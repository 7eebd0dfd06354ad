import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { OutboxContributor, OutboxEntry } from '#core/outbox/types'
import { readQuery } from '#core/native_sql'
import type { CommentCreating, RowsChanging } from '#plugins/tables/events'
import type { MessageChanging } from '#plugins/books/events'
import { serializeMessage } from '#plugins/books/serializers/message_serializer'
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

/**
 * Contributors read with plain statements (readQuery): a writer may stage
 * from a native transaction, which has no query builder (the tables
 * plugin's one-cell writes).
 */
async function codes(client: QueryClientContract, ids: (number | null)[]) {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
  const rows = wanted.length
    ? await readQuery(
        `SELECT id, code FROM users WHERE id IN (${wanted.map(() => '?').join(', ')})`,
        wanted,
        client
      )
    : []
  return new Map(rows.map((row) => [Number(row.id), String(row.code)]))
}

/** The body's actor: who wrote, and on whose behalf (user codes, from codes()). */
function actorOf(
  users: Map<number, string>,
  event: { actorId: number; onBehalfOf: number | null }
) {
  return {
    u_c: users.get(event.actorId) ?? null,
    onBehalfOf: event.onBehalfOf === null ? null : (users.get(event.onBehalfOf) ?? null),
  }
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
      const subscriptions = await active(client, { categoryId: event.categoryId }, index)
      if (subscriptions.length === 0) return []
      const users = await codes(client, [event.actorId, event.onBehalfOf])
      const created = new Set(event.created)
      const deleted = new Set(event.deleted)
      const kindOf = (id: number) =>
        created.has(id) ? 'row.created' : deleted.has(id) ? 'row.deleted' : 'row.updated'
      // One time for the whole write, whatever the number of rows.
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
          entries.push(
            entryOf(
              subscription,
              type,
              `wh${subscription.id}.${type}.${change.id}.${event.stamp}${event.seq ? `.${event.seq}` : ''}`,
              `wh${subscription.id}.row.${change.id}`,
              {
                book: { b_o: event.b_o, b_c: event.b_c },
                table: { catId: event.categoryId, name: event.catName },
                rowId: change.id,
                fields: change.fields,
                actor: actorOf(users, event),
                sstamp: event.stamp,
                source: event.source,
              },
              timestamp
            )
          )
        }
      }
      return entries
    },
  }
}

/**
 * The active subscriptions of a table (catId) or of a book (category null):
 * the index's copy when it is fresh, else read in the write's transaction.
 */
async function active(
  client: QueryClientContract,
  where: { categoryId?: number; bookId?: number },
  index?: SubscriptionIndex
) {
  const known = index?.activeFor(where)
  if (known) return known
  const rows =
    where.categoryId !== undefined
      ? await readQuery(
          'SELECT * FROM webhooks WHERE active = ? AND category_id = ?',
          [true, where.categoryId],
          client
        )
      : await readQuery(
          'SELECT * FROM webhooks WHERE active = ? AND book_id = ? AND category_id IS NULL',
          [true, where.bookId],
          client
        )
  return rows as WebhookRow[]
}

/** One delivery of a subscription (the body's data gets its webhookId and idempotency key). */
function entryOf(
  subscription: WebhookRow,
  type: string,
  idempotencyKey: string,
  orderKey: string,
  data: Record<string, unknown>,
  timestamp = new Date().toISOString()
): OutboxEntry {
  const payload: WebhookPayload = {
    type,
    timestamp,
    data: { webhookId: Number(subscription.id), idempotencyKey, ...data },
  }
  return {
    channel: CHANNEL,
    recipient: recipientOf(Number(subscription.id)),
    idempotencyKey,
    orderKey,
    eventType: type,
    payload,
  }
}

/**
 * `message.created|updated|deleted` for the book's subscriptions (books'
 * MessageWriter stages `books:message_changed` in its transactions). Every
 * message write fires (bypassUrlTrigger is a table-write parameter); order
 * kept per subscription and message.
 */
export function messagesContributor(index: SubscriptionIndex): OutboxContributor<MessageChanging> {
  return {
    wants: (event) => index.hasBook(event.bookId),
    async entries(event, client) {
      const type = `message.${event.kind}`
      const all = await active(client, { bookId: event.bookId }, index)
      const subscriptions = all.filter((subscription) => listOf(subscription.events).includes(type))
      if (subscriptions.length === 0) return []
      const creatorId = Number(event.row.creator_id)
      const users = await codes(client, [event.actorId, event.onBehalfOf, creatorId])
      const smid = Number(event.row.smid)
      const message = serializeMessage(event.row, { u_c: users.get(creatorId) ?? '' })
      return subscriptions.map((subscription) =>
        entryOf(
          subscription,
          type,
          `wh${subscription.id}.${type}.${smid}.${event.stamp}`,
          `wh${subscription.id}.msg.${smid}`,
          {
            book: { b_o: event.b_o, b_c: event.b_c },
            smid,
            uuid: event.row.uuid,
            message,
            actor: actorOf(users, event),
            sstamp: event.stamp,
          }
        )
      )
    },
  }
}

/**
 * `comment.created` for the table's subscriptions (tables' comments service
 * stages `tables:comment_created`); ordered with the row's changes (same
 * order key), so a comment is not delivered before the row's earlier write.
 */
export function commentsContributor(index: SubscriptionIndex): OutboxContributor<CommentCreating> {
  return {
    wants: (event) => index.hasCategory(event.categoryId),
    async entries(event, client) {
      const type = 'comment.created'
      const all = await active(client, { categoryId: event.categoryId }, index)
      const subscriptions = all.filter((subscription) => {
        const only = listOf(subscription.field_ids).map(Number)
        return (
          listOf(subscription.events).includes(type) &&
          (only.length === 0 || only.includes(event.fieldId))
        )
      })
      if (subscriptions.length === 0) return []
      const users = await codes(client, [event.actorId, event.onBehalfOf])
      return subscriptions.map((subscription) =>
        entryOf(
          subscription,
          type,
          `wh${subscription.id}.${type}.${event.commentId}`,
          `wh${subscription.id}.row.${event.rowId}`,
          {
            book: { b_o: event.b_o, b_c: event.b_c },
            table: { catId: event.categoryId, name: event.catName },
            rowId: event.rowId,
            field: { fieldId: event.fieldId, name: event.fieldName },
            comment: { id: event.commentId, m: event.text, action: event.action ?? [] },
            actor: actorOf(users, event),
            sstamp: event.stamp,
          }
        )
      )
    },
  }
}
