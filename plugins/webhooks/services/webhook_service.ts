import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import encryption from '@adonisjs/core/services/encryption'
import ipaddr from 'ipaddr.js'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import { enforceRestrictions } from '#core/auth/restrictions'
import { rpcError } from '#core/rpc/errors'
import { readQuery } from '#core/native_sql'
import { OutboxService } from '#core/outbox/outbox_service'
import { AuditLog, CHANGED, auditActorOf, diff } from '#core/audit/audit_log'
import { SocketHub } from '#core/socket/hub'
import { MessageType } from '#core/socket/protocol'
import { BookAccessService, type BookRef } from '#plugins/books/services/book_access_service'
import { TableAccess } from '#plugins/tables/services/table_access'
import webhooksConfig from '../config.js'
import { refusal } from '../lib/address_guard.js'
import { newSecret } from '../lib/signature.js'
import { SubscriptionIndex } from './subscription_index.js'

export const TABLE_EVENTS = ['row.created', 'row.updated', 'row.deleted', 'comment.created']
export const BOOK_EVENTS = ['message.created', 'message.updated', 'message.deleted']
export const CHANNEL = 'webhook'
const SECRET_PURPOSE = 'webhooks.secret'

export interface WebhookRow {
  id: number
  book_id: number
  category_id: number | null
  url: string
  events: string
  field_ids: string
  description: string
  active: boolean | number
  is_trigger_url: boolean | number
  secret: string
  previous_secret: string | null
  previous_until: number | null
  created_by: number
  consecutive_failures: number
  disabled_reason: string | null
  created_at: number
  updated_at: number
}

/** A subscription with the book it belongs to (answers and checks). */
export interface Subscription {
  row: WebhookRow
  book: BookRef
}

export interface TargetInput {
  b_o?: string
  b_c?: string
  catId?: number
}

export interface WebhookInput {
  url?: string
  events?: string
  fieldIds?: string
  description?: string
  active?: boolean
}

/** How the audit log names a subscription. */
const webhookTarget = (id: number, url: string) => ({ type: 'webhook', id, label: url })

/** The recipient of a subscription's deliveries in the outbox. */
export const recipientOf = (id: number) => `wh:${id}`

/**
 * A subscription belongs to the area of what it reports: a table's rows (tables) or a book's
 * messages (messages). Its operations name it by catId, b_c or webhookId, so the kernel's
 * restriction step cannot see its area or book: a session hiding that area, or restricted to
 * another book, is refused here (read-only sessions are refused writes by the kernel).
 */
function restrictToArea(actor: Actor, area: OperationArea) {
  enforceRestrictions({ label: 'This webhook', writes: false, area }, actor, {})
}

function restrictToBook(actor: Actor, book: { b_o: string; b_c: string }) {
  enforceRestrictions({ label: 'This webhook', writes: false }, actor, {
    b_o: book.b_o,
    b_c: book.b_c,
  })
}

/**
 * Webhook subscriptions: who may manage them (the table's or the book's
 * administrators), what they accept (http(s) URLs, known event types, fields
 * of their table), their secrets (encrypted with APP_KEY, answered once).
 */
@inject()
export class WebhookService {
  constructor(
    private tables: TableAccess,
    private books: BookAccessService,
    private index: SubscriptionIndex,
    private outbox: OutboxService,
    private hub: SocketHub,
    private audit: AuditLog
  ) {}

  /** The table (catId) or book (b_c) named, checked for administration rights. */
  async target(actor: Actor, input: TargetInput) {
    if (input.catId) {
      restrictToArea(actor, 'tables')
      const scope = await this.tables.forCategory(actor, input.catId, 'admin', input.b_o)
      restrictToBook(actor, scope.book)
      return { book: scope.book, category: scope.category }
    }
    if (!input.b_c)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: catId (a table) or b_c (a book)')
    restrictToArea(actor, 'messages')
    const book = await this.books.resolveFor(
      actor,
      input.b_o || actor.user.code,
      input.b_c,
      'admin'
    )
    return { book, category: null }
  }

  /** `triggerUrl`: updateTable's triggerUpdateUrl webhook (setTriggerUrl), marked in the same insert. */
  async create(
    actor: Actor,
    target: TargetInput,
    input: WebhookInput & { url: string },
    options: { triggerUrl?: boolean } = {}
  ) {
    const { book, category } = await this.target(actor, target)
    const url = checkUrl(input.url)
    const events = checkEvents(input.events ?? '', category !== null)
    const fieldIds = checkFields(input.fieldIds, category)
    const secret = newSecret()
    const now = Date.now()
    // The cap is counted and the row inserted in one transaction holding the book's row (MariaDB:
    // FOR UPDATE; SQLite: one writer at a time), so two concurrent creations cannot both pass it.
    const id = await db.transaction(async (trx) => {
      await trx.from('books').where('id', book.id).forUpdate().select('id').first()
      const count = await trx
        .from('webhooks')
        .where('book_id', book.id)
        .where((where) =>
          category ? where.where('category_id', category.id) : where.whereNull('category_id')
        )
        .count('* as total')
        .first()
      if (Number(count?.total ?? 0) >= webhooksConfig.maxPerTarget)
        throw rpcError(
          'CONFLICT',
          `At most ${webhooksConfig.maxPerTarget} webhooks per table or book`
        )
      const [inserted] = await trx.table('webhooks').insert({
        book_id: book.id,
        category_id: category?.id ?? null,
        url,
        events: events.join(','),
        field_ids: fieldIds.join(','),
        description: input.description ?? '',
        active: true,
        is_trigger_url: options.triggerUrl ?? false,
        secret: seal(secret),
        created_by: actor.user.id,
        created_at: now,
        updated_at: now,
      })
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'webhook.created',
          target: webhookTarget(Number(inserted), url),
          changes: {
            url: { from: null, to: url },
            events: { from: null, to: events.join(',') },
            book: { from: null, to: `${book.b_o}/${book.b_c}` },
            table: { from: null, to: category?.id ?? null },
            secret: CHANGED,
          },
        },
        trx
      )
      return Number(inserted)
    })
    await this.index.reload()
    const created = await this.find(id)
    return { subscription: created!, secret }
  }

  async list(actor: Actor, target: TargetInput) {
    const { book, category } = await this.target(actor, target)
    const rows = await db
      .from('webhooks')
      .where('book_id', book.id)
      .where((where) =>
        category ? where.where('category_id', category.id) : where.whereNull('category_id')
      )
      .orderBy('id')
    return rows.map((row) => ({ row: row as WebhookRow, book }))
  }

  /** The stored row alone (each delivery's attempt reads it: one query, no book). */
  async row(id: number): Promise<WebhookRow | null> {
    return ((await db.from('webhooks').where('id', id).first()) as WebhookRow | undefined) ?? null
  }

  /**
   * Several subscriptions by id, in one read (the outbox's batch of deliveries, at every claim):
   * a plain statement, prepared once per number of ids, not a knex query compiled each time.
   */
  async rows(ids: number[]): Promise<WebhookRow[]> {
    if (ids.length === 0) return []
    return (await readQuery(
      `SELECT * FROM webhooks WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids
    )) as WebhookRow[]
  }

  async find(id: number): Promise<Subscription | null> {
    const row = await this.row(id)
    if (!row) return null
    const book = await this.books.findById(Number(row.book_id))
    return book ? { row, book } : null
  }

  /** A subscription the actor administers (NOT_FOUND otherwise, as for a table one may not see). */
  async owned(actor: Actor, id: number) {
    const found = await this.find(id)
    if (!found) throw rpcError('NOT_FOUND', `Webhook ${id} not found`)
    restrictToArea(actor, found.row.category_id ? 'tables' : 'messages')
    restrictToBook(actor, found.book)
    if (!found.row.category_id) {
      await this.books.assert(actor, found.book, 'admin')
      return { ...found, category: null }
    }
    // The table's check answers the table (its fields): update checks fieldIds against it.
    const scope = await this.tables.forCategory(actor, Number(found.row.category_id), 'admin')
    return { ...found, category: scope.category }
  }

  async update(actor: Actor, id: number, input: WebhookInput) {
    const { category, row } = await this.owned(actor, id)
    const changes: Record<string, unknown> = { updated_at: Date.now() }
    if (input.url !== undefined) changes.url = checkUrl(input.url)
    if (input.events !== undefined)
      changes.events = checkEvents(input.events, category !== null).join(',')
    if (input.fieldIds !== undefined)
      changes.field_ids = checkFields(input.fieldIds, category).join(',')
    if (input.description !== undefined) changes.description = input.description
    if (input.active !== undefined) {
      changes.active = input.active
      if (input.active) {
        changes.consecutive_failures = 0
        changes.disabled_reason = null
      }
    }
    await db.transaction(async (trx) => {
      await trx.from('webhooks').where('id', id).update(changes)
      const audited = ['url', 'events', 'field_ids', 'description', 'active'] as const
      const pick = (source: Record<string, unknown>) =>
        Object.fromEntries(
          audited
            .filter((field) => field in changes)
            .map((field) => [field, field === 'active' ? Boolean(source[field]) : source[field]])
        )
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'webhook.updated',
          target: webhookTarget(id, String(changes.url ?? row.url)),
          changes: diff(pick(row as any), pick(changes)),
        },
        trx
      )
    })
    if (input.active === false) await this.outbox.cancelPending(CHANNEL, recipientOf(id))
    await this.index.reload()
    return (await this.find(id))!
  }

  async delete(actor: Actor, id: number) {
    const { row } = await this.owned(actor, id)
    await db.transaction(async (trx) => {
      await trx.from('webhooks').where('id', id).delete()
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'webhook.deleted',
          target: webhookTarget(id, row.url),
          changes: { url: { from: row.url, to: null } },
        },
        trx
      )
    })
    await this.outbox.cancelPending(CHANNEL, recipientOf(id))
    await this.index.reload()
  }

  /** A new secret; the old one keeps signing (a second signature) for 24 hours. */
  async rotate(actor: Actor, id: number) {
    const { row } = await this.owned(actor, id)
    const secret = newSecret()
    const now = Date.now()
    await db.transaction(async (trx) => {
      await trx
        .from('webhooks')
        .where('id', id)
        .update({
          secret: seal(secret),
          previous_secret: row.secret,
          previous_until: now + webhooksConfig.rotationOverlapMs,
          updated_at: now,
        })
      await this.audit.record(
        {
          actor: auditActorOf(actor),
          kind: 'webhook.secret_rotated',
          target: webhookTarget(id, row.url),
          changes: { secret: CHANGED },
        },
        trx
      )
    })
    return { subscription: (await this.find(id))!, secret }
  }

  /** The secrets that sign now: the current one, and a rotated-out one during its overlap. */
  signingSecrets(row: WebhookRow, now = Date.now()): string[] {
    const secrets = [unseal(row.secret)]
    if (row.previous_secret && Number(row.previous_until ?? 0) > now)
      secrets.push(unseal(row.previous_secret))
    return secrets
  }

  /**
   * updateTable's triggerUpdateUrl: the table's own row webhook for that URL
   * (created, or its URL changed; an empty URL disables it). Its secret is
   * readable later only by rotating it (rotateWebhookSecret).
   */
  async setTriggerUrl(actor: Actor, catId: number, url: string) {
    const existing = (await db
      .from('webhooks')
      .where('category_id', catId)
      .where('is_trigger_url', true)
      .first()) as WebhookRow | null
    if (url.trim() === '') {
      if (existing) await this.update(actor, Number(existing.id), { active: false })
      return
    }
    if (existing) {
      await this.update(actor, Number(existing.id), { url, active: true })
      return
    }
    await this.create(
      actor,
      { catId },
      { url, events: 'row.created,row.updated,row.deleted', description: 'triggerUpdateUrl' },
      { triggerUrl: true }
    )
  }

  /** The trigger URLs of some tables (getBookTables' triggerUpdateUrl). */
  async triggerUrls(categoryIds: number[]): Promise<Map<number, string>> {
    const map = new Map<number, string>()
    if (categoryIds.length === 0) return map
    const rows = await db
      .from('webhooks')
      .whereIn('category_id', categoryIds)
      .where('is_trigger_url', true)
      .where('active', true)
      .select('category_id', 'url')
    for (const row of rows) map.set(Number(row.category_id), row.url)
    return map
  }

  /** A delivery failed for good: counts, and disables the subscription after too many in a row. */
  async noteFailure(id: number, reason: string, disableNow = false) {
    const row = (await db.from('webhooks').where('id', id).first()) as WebhookRow | null
    if (!row) return
    const failures = Number(row.consecutive_failures) + 1
    const disable = disableNow || failures >= webhooksConfig.disableAfterFailures
    await db
      .from('webhooks')
      .where('id', id)
      .update({
        consecutive_failures: failures,
        ...(disable ? { active: false, disabled_reason: reason.slice(0, 500) } : {}),
        updated_at: Date.now(),
      })
    if (disable) {
      await this.outbox.cancelPending(CHANNEL, recipientOf(id))
      await this.index.reload()
      await this.tellCreator(row, reason)
    }
  }

  /**
   * A subscription was disabled: its creator's sockets and SSE channel get a
   * system message (type 11, msg `webhookDisabled`), on every instance (the
   * hub's Redis channel; a `queue:work` process publishes there too).
   */
  private async tellCreator(row: WebhookRow, reason: string) {
    const book = await this.books.findById(Number(row.book_id))
    const [creator] = await db.from('users').where('id', row.created_by).select('code')
    if (!creator) return
    this.hub.deliver({
      userIds: [Number(row.created_by)],
      frame: {
        type: MessageType.SYSTEM_MESSAGE,
        u_c: String(creator.code),
        msg: 'webhookDisabled',
        b_o: book?.b_o ?? '',
        b_c: book?.b_c ?? '',
        param: 'webhook',
        value: {
          webhookId: Number(row.id),
          catId: row.category_id === null ? null : Number(row.category_id),
          url: row.url,
          disabledReason: reason.slice(0, 500),
        },
      },
    })
  }

  async noteSuccess(id: number) {
    await db
      .from('webhooks')
      .where('id', id)
      .where('consecutive_failures', '>', 0)
      .update({ consecutive_failures: 0 })
  }
}

function seal(secret: string) {
  return encryption.encrypt(secret, undefined, SECRET_PURPOSE)
}

/**
 * Secrets already decrypted, by their sealed text (a rotation seals a new one, so an entry never
 * goes stale). Every batch of deliveries signs with its subscriptions' secrets: decrypting them
 * each time took about 3 % of the server's CPU under bench:webhooks' writes.
 */
const unsealed = new Map<string, string>()
const UNSEALED_MAX = 1000

function unseal(sealed: string): string {
  const known = unsealed.get(sealed)
  if (known !== undefined) return known
  const secret = encryption.decrypt<string>(sealed, SECRET_PURPOSE)
  if (!secret) throw new Error('webhook secret could not be decrypted (APP_KEY changed?)')
  if (unsealed.size >= UNSEALED_MAX) unsealed.clear()
  unsealed.set(sealed, secret)
  return secret
}

/** http(s) only; a literal address must be public (names are checked when connecting). */
export function checkUrl(text: string): string {
  const value = text.trim()
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter url: not a URL', { field: 'url' })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter url: only http and https URLs', {
      field: 'url',
    })
  if (url.username || url.password)
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter url: no credentials in the URL', {
      field: 'url',
    })
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (ipaddr.isValid(host)) {
    const why = refusal(host, webhooksConfig.allowedRanges)
    if (why) throw rpcError('INVALID_PARAMETER', `Invalid parameter url: ${why}`, { field: 'url' })
  }
  return url.toString()
}

export function checkEvents(text: string, table: boolean): string[] {
  const allowed = table ? TABLE_EVENTS : BOOK_EVENTS
  const events = [
    ...new Set(
      text
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
    ),
  ]
  if (events.length === 0)
    throw rpcError('MISSING_PARAMETER', 'Missing parameter: events', { field: 'events' })
  const unknown = events.find((event) => !allowed.includes(event))
  if (unknown)
    throw rpcError(
      'INVALID_PARAMETER',
      `Invalid parameter events: "${unknown}" is not one of ${allowed.join(', ')}`,
      { field: 'events' }
    )
  return events
}

function checkFields(
  text: string | undefined,
  category: { id: number; name: string; fields: { id: number }[] } | null
): number[] {
  const parts = (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
  if (parts.length === 0) return []
  if (!category)
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter fieldIds: only for a table', {
      field: 'fieldIds',
    })
  const known = new Set(category.fields.map((field) => field.id))
  return [
    ...new Set(
      parts.map((part) => {
        const id = Number(part)
        if (!/^\d+$/.test(part) || !known.has(id))
          throw rpcError(
            'INVALID_PARAMETER',
            `Invalid parameter fieldIds: ${part} is not a field of table "${category.name}"`,
            { field: 'fieldIds' }
          )
        return id
      })
    ),
  ]
}
