import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'
import type { Actor } from '#core/rpc/base_operation'
import { containsPattern, type Paged } from '#core/paging'

/**
 * Who made an administrative change: a user (by id and code) from an address,
 * or the system (an ace command: address `cli`; a job: `system`).
 */
export interface AuditActor {
  userId: number | null
  code: string
  address: string
}

/** A value an entry may show: scalars only (an object is recorded as its JSON text). */
export type AuditValue = string | number | boolean | null

/** One field's change: old -> new, or only that it changed (passwords, secrets, keys). */
export type AuditChange = { from: AuditValue; to: AuditValue } | { changed: true }

/** What a service method records, in the transaction of the change it made. */
export interface AuditEntry {
  actor: AuditActor
  /** A stable dotted name: `user.created`, `book.archived`, `webhook.updated`, `setting.changed`. */
  kind: string
  target: { type: string; id?: string | number | null; label: string }
  /** Per field (missing: nothing to show beyond the kind). */
  changes?: Record<string, AuditChange>
}

/** An entry as the console and the CSV export read it. */
export interface AuditRecord {
  id: number
  at: Date
  actorId: number | null
  actorCode: string
  address: string
  kind: string
  targetType: string
  targetId: string | null
  targetLabel: string
  changes: Record<string, AuditChange>
}

export interface AuditFilter {
  actorId?: number
  /** The actor's code exactly (a user code, `system`, `ace user:create`). */
  actor?: string
  /** Exact kind (`user.disabled`) or a prefix ending in a dot (`user.`). */
  kind?: string
  /** Contained, case aside, in the actor's code, the kind, the target's label or the changes. */
  text?: string
  /** Epoch milliseconds, inclusive. */
  from?: number
  /** Epoch milliseconds, exclusive. */
  to?: number
}

export interface AuditSettings {
  retentionDays: number
}

/**
 * The kinds recorded today, in plain words (the console's filter and its
 * lines). A kind not listed here (a plugin's own) is shown as it is.
 */
export const AUDIT_KINDS: Record<string, string> = {
  'user.created': 'User created',
  'user.updated': 'User edited',
  'user.disabled': 'User disabled',
  'user.enabled': 'User enabled',
  'user.password_reset': 'Password reset',
  'user.api_password_sign_in': 'Password sign-in on the API',
  'user.two_factor_reset': 'Two-factor reset',
  'user.two_factor_policy': 'Two-factor policy',
  'delegation.granted': 'Acts on behalf of: granted',
  'delegation.revoked': 'Acts on behalf of: revoked',
  'session.revoked': 'Session revoked',
  'session.revoked_all': 'All sessions revoked',
  'book.archived': 'Book archived',
  'book.unarchived': 'Book unarchived',
  'book.deleted': 'Book deleted',
  'book.member_right_changed': 'Member right changed',
  'gateway.allowed': 'SMS gateway allowed',
  'webhook.created': 'Webhook created',
  'webhook.updated': 'Webhook changed',
  'webhook.deleted': 'Webhook deleted',
  'webhook.secret_rotated': 'Webhook secret rotated',
  'setting.changed': 'Setting changed',
}

/** The one marker for a change whose value must never be written down. */
export const CHANGED: AuditChange = Object.freeze({ changed: true }) as AuditChange

/** Field names whose values are never recorded, whatever a caller passes (defence in depth). */
const SECRET_FIELD = /password$|secret|token|sesskey|^totp|recovery|appkey$|oauthkey$|hash$/i

const DAY_MS = 86_400_000
const EXPORT_BATCH = 1000
const MAX_TEXT = 191

/** The actor of a change nobody asked for in person (a job, a timer). */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({
  userId: null,
  code: 'system',
  address: 'system',
})

/** The actor of a change made by an ace command: `ace quire:user:create`, from `cli`. */
export function cliActor(command: string): AuditActor {
  return { userId: null, code: `ace ${command}`, address: 'cli' }
}

/** The actor of an api.php or console change: the user who holds the session (o_u, the administrator). */
export function auditActorOf(actor: Actor | null | undefined, address?: string): AuditActor {
  if (!actor) return SYSTEM_ACTOR
  return {
    userId: actor.principal.id,
    code: actor.principal.code,
    address: address ?? actor.address ?? 'unknown',
  }
}

/** The actor of a change made by `user` (the console's administrator) from `address`. */
export function userActor(user: { id: number; code: string }, address: string): AuditActor {
  return { userId: user.id, code: user.code, address }
}

/** Old -> new for each field whose value differs (fields equal on both sides are left out). */
export function diff(
  before: Record<string, unknown>,
  after: Record<string, unknown>
): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {}
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const from = plain(before[field])
    const to = plain(after[field])
    if (from !== to) changes[field] = { from, to }
  }
  return changes
}

function plain(value: unknown): AuditValue {
  if (value === undefined || value === null) return null
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return value
  if (value instanceof Date) return value.toISOString()
  if (typeof (value as any).toISO === 'function') return (value as any).toISO()
  return JSON.stringify(value)
}

/** Secret fields lose their values; anything else becomes a plain value. */
function sanitize(changes: Record<string, AuditChange> | undefined): Record<string, AuditChange> {
  const clean: Record<string, AuditChange> = {}
  for (const [field, change] of Object.entries(changes ?? {})) {
    if ('changed' in change || SECRET_FIELD.test(field)) clean[field] = { changed: true }
    else clean[field] = { from: plain(change.from), to: plain(change.to) }
  }
  return clean
}

const clip = (text: string, length = MAX_TEXT) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text

/**
 * The audit log (docs/audit.md): every administrative change, recorded by
 * the one service method of each behaviour, so api.php, the console and ace
 * commands are all covered. Passwords and secrets are recorded as "changed",
 * never with their values.
 */
export class AuditLog {
  constructor(
    private db: Database,
    private settings: AuditSettings
  ) {}

  /**
   * Writes one entry. With `client` (the caller's transaction) it commits or
   * rolls back with the change itself: a change that did not happen logs nothing.
   */
  async record(entry: AuditEntry, client?: QueryClientContract): Promise<void> {
    const target = client ?? this.db.connection()
    await target
      .insertQuery()
      .table('audit_log')
      .insert({
        created_at: Date.now(),
        actor_id: entry.actor.userId,
        actor_code: clip(entry.actor.code),
        address: clip(entry.actor.address, 64),
        kind: clip(entry.kind, 64),
        target_type: clip(entry.target.type, 32),
        target_id:
          entry.target.id === undefined || entry.target.id === null
            ? null
            : clip(String(entry.target.id), 64),
        target_label: clip(entry.target.label),
        changes: JSON.stringify(sanitize(entry.changes)),
      })
  }

  /** How an entry names user `userId` as its target (read with `client` inside a transaction). */
  async userTarget(userId: number, client?: QueryClientContract) {
    const row = await (client ?? this.db.connection())
      .from('users')
      .where('id', userId)
      .select('code')
      .first()
    return { type: 'user', id: userId, label: row ? String(row.code) : `#${userId}` }
  }

  /** A page of entries matching `filter`, newest first (a page past the last reads the last). */
  async search(
    filter: AuditFilter & { page: number; perPage: number }
  ): Promise<Paged<AuditRecord>> {
    const query = this.filtered(filter)
    const counted = await query.clone().count('* as total').first()
    const total = Number(counted?.total ?? 0)
    const perPage = Math.max(1, Math.min(filter.perPage, 200))
    const page = Math.max(1, Math.min(Math.floor(filter.page) || 1, Math.ceil(total / perPage)))
    const rows = total
      ? await query
          .orderBy('id', 'desc')
          .offset((page - 1) * perPage)
          .limit(perPage)
          .select('*')
      : []
    return { items: rows.map(toRecord), total, page, perPage, search: filter.text ?? '' }
  }

  /** The distinct kinds recorded so far (the console's filter). */
  async kinds(): Promise<string[]> {
    const rows = await this.db.from('audit_log').distinct('kind').orderBy('kind')
    return rows.map((row) => String(row.kind))
  }

  /**
   * The entries matching `filter` as CSV lines (header first), newest first,
   * read in batches by id: any number of entries without holding them in memory.
   */
  async *exportCsv(filter: AuditFilter): AsyncGenerator<string> {
    yield csvLine([
      'id',
      'at',
      'actor_id',
      'actor',
      'address',
      'kind',
      'target_type',
      'target_id',
      'target',
      'changes',
    ])
    let before: number | null = null
    for (;;) {
      const query = this.filtered(filter)
      if (before !== null) query.where('id', '<', before)
      const rows = await query.orderBy('id', 'desc').limit(EXPORT_BATCH).select('*')
      if (rows.length === 0) return
      let chunk = ''
      for (const row of rows) {
        const record = toRecord(row)
        chunk += csvLine([
          record.id,
          record.at.toISOString(),
          record.actorId ?? '',
          record.actorCode,
          record.address,
          record.kind,
          record.targetType,
          record.targetId ?? '',
          record.targetLabel,
          describeChanges(record.changes),
        ])
      }
      yield chunk
      if (rows.length < EXPORT_BATCH) return
      before = Number(rows[rows.length - 1].id)
    }
  }

  /** Deletes entries older than the retention (AUDIT_RETENTION_DAYS); answers how many. */
  async prune(now = Date.now()): Promise<number> {
    const before = now - this.settings.retentionDays * DAY_MS
    let removed = 0
    // In slices: one huge DELETE would hold locks (MySQL) for as long as it runs.
    for (;;) {
      const ids = await this.db
        .from('audit_log')
        .where('created_at', '<', before)
        .orderBy('id')
        .limit(EXPORT_BATCH)
        .select('id')
      if (ids.length === 0) return removed
      removed += Number(
        await this.db
          .from('audit_log')
          .whereIn(
            'id',
            ids.map((row) => row.id)
          )
          .delete()
      )
    }
  }

  private filtered(filter: AuditFilter): DatabaseQueryBuilderContract<any> {
    const query = this.db.from('audit_log')
    if (filter.actorId !== undefined) query.where('actor_id', filter.actorId)
    if (filter.actor) query.where('actor_code', filter.actor)
    if (filter.kind) {
      if (filter.kind.endsWith('.'))
        query.where('kind', 'like', `${filter.kind.replace(/[%_\\]/g, '')}%`)
      else query.where('kind', filter.kind)
    }
    if (filter.from !== undefined) query.where('created_at', '>=', filter.from)
    if (filter.to !== undefined) query.where('created_at', '<', filter.to)
    const like = containsPattern(filter.text)
    if (like)
      query.where((scope) => {
        for (const column of ['actor_code', 'kind', 'target_label', 'address', 'changes'])
          scope.orWhereRaw(`LOWER(${column}) LIKE ?`, [like])
      })
    return query
  }
}

function toRecord(row: any): AuditRecord {
  let changes: Record<string, AuditChange> = {}
  try {
    changes = JSON.parse(row.changes)
  } catch {
    // A hand-edited row: shown without its changes rather than failing the page.
  }
  return {
    id: Number(row.id),
    at: new Date(Number(row.created_at)),
    actorId: row.actor_id === null ? null : Number(row.actor_id),
    actorCode: String(row.actor_code),
    address: String(row.address),
    kind: String(row.kind),
    targetType: String(row.target_type),
    targetId: row.target_id === null ? null : String(row.target_id),
    targetLabel: String(row.target_label),
    changes,
  }
}

/** `field: old → new; secret: changed` (the CSV: the recorded field names, values as stored). */
export function describeChanges(changes: Record<string, AuditChange>): string {
  return Object.entries(changes)
    .map(([field, change]) =>
      'changed' in change
        ? `${field}: changed`
        : `${field}: ${shown(change.from)} → ${shown(change.to)}`
    )
    .join('; ')
}

const shown = (value: AuditValue) => (value === null ? '(none)' : String(value))

/** The recorded field names in plain words (the console); others are split at capitals. */
const FIELD_LABELS: Record<string, string> = {
  code: 'User code',
  email: 'E-mail',
  isAdmin: 'Administrator',
  apiPasswordSignInOff: 'Password sign-in on the API turned off',
  twoFactor: 'Two-factor',
  twoFactorPolicy: 'Two-factor policy',
  actsOnBehalf: 'Acts on behalf of them',
  apiSession: 'API session',
  apiSessions: 'API sessions',
  oauthkeys: 'Application keys of the user',
  signedInSession: 'Sign-in session',
  url: 'URL',
  field_ids: 'Fields',
}

function fieldLabel(field: string): string {
  const known = FIELD_LABELS[field]
  if (known) return known
  const words = field
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const plainValue = (value: AuditValue) =>
  value === true ? 'yes' : value === false ? 'no' : value === '' ? '(empty)' : shown(value)

/** `First name: Ada → Bea; Password: changed`: the console's line, in plain words. */
export function describeChangesPlainly(changes: Record<string, AuditChange>): string {
  return Object.entries(changes)
    .map(([field, change]) =>
      'changed' in change
        ? `${fieldLabel(field)}: changed`
        : `${fieldLabel(field)}: ${plainValue(change.from)} → ${plainValue(change.to)}`
    )
    .join('; ')
}

/** One CSV line (RFC 4180 quoting; a leading = + - @ is neutralised against spreadsheet formulas). */
function csvLine(values: (string | number)[]): string {
  return (
    values
      .map((value) => {
        let text = String(value)
        if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`
        return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
      })
      .join(',') + '\r\n'
  )
}
