import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import limiter from '@adonisjs/limiter/services/main'
import { errors as limiterErrors, type Limiter } from '@adonisjs/limiter'
import env from '#start/env'
import ApiSession, { NO_RESTRICTIONS } from '#models/api_session'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { generateKey, hashKey } from '#core/auth/keys'
import { UserService } from '#core/services/user_service'
import { COMPUTED_TYPES, rowTableName, serializeCell, type FieldDef } from '../lib/field_types.js'
import { asIdList } from '../lib/wire.js'
import { MetaService, type CategoryMeta, type ViewMeta } from './meta_service.js'
import { HistoryService } from './history_service.js'
import { FieldEncryption } from './field_encryption.js'
import { RowWriter } from './row_writer.js'
import { categoryOfRowId } from './schema_service.js'
import { TableAccess } from './table_access.js'

/** The token rate limits (README.md, configuration): requests per token and per client address. */
export const TOKEN_RATE = {
  perToken: env.get('TABLES_TOKEN_RATE_PER_TOKEN', 60),
  perAddress: env.get('TABLES_TOKEN_RATE_PER_ADDRESS', 300),
  window: env.get('TABLES_TOKEN_RATE_WINDOW', '1 minute') as string | number,
}

/**
 * The two limiters (the kernel's limiter: in memory, or in Redis shared by every instance). The
 * manager caches a limiter by its settings, so every caller gets the same two.
 */
export function tokenLimiters() {
  return {
    perToken: limiter.use({ requests: TOKEN_RATE.perToken, duration: TOKEN_RATE.window }),
    perAddress: limiter.use({ requests: TOKEN_RATE.perAddress, duration: TOKEN_RATE.window }),
  }
}

/** The limiter keys of a client address and of a token. */
export const addressKey = (ip: string) => `tables-token-ip:${ip}`
const tokenKey = (tokenId: number) => `tables-token:${tokenId}`

/** Longest lifetime a token may be given (expiresIn): ten years. */
const MAX_EXPIRES_IN = 10 * 365 * 24 * 3600

/** A token as stored (table_tokens). */
interface TokenRow {
  id: number
  category_id: number
  view_id: number | null
  row_id: number | string | null
  read_only: number | boolean
  required_fields: string | null
  creator_id: number
  created_at: number | string
  expires_at: number | string | null
  revoked_at: number | string | null
}

/** What a valid token gives access to. */
interface Grant {
  token: TokenRow
  category: CategoryMeta
  view: ViewMeta | null
  rowId: number | null
  /** The fields the token shows and may write (the view's, hidden ones left out). */
  fields: FieldDef[]
  actor: Actor
}

export interface CreateTokenInput {
  b_o?: string
  catId: number
  rowId?: string
  viewId?: number
  readOnly?: boolean
  expiresIn?: number
  requiredFields?: unknown
}

const now = () => Math.floor(Date.now() / 1000)
const invalid = (field: string, message: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter ${field}: ${message}`, { field })

/**
 * Row and form tokens: a table's administrator makes a token naming one row
 * (read, and written unless read-only) or one view used as a form (new rows).
 * Whoever holds the token uses it without a session; the token acts with its
 * creator's rights (a creator who lost the table loses the token's use too),
 * and writes go through RowWriter like any other (stamp, socket, events,
 * webhooks), recorded as made by the token (Actor.token, the event's tokenId
 * and source 'token'). Only a token's SHA-256 digest is stored, as for keys.
 */
@inject()
export class TableTokensService {
  private perToken: Limiter
  private perAddress: Limiter

  constructor(
    private access: TableAccess,
    private meta: MetaService,
    private writer: RowWriter,
    private users: UserService,
    private history: HistoryService,
    private encryption: FieldEncryption
  ) {
    const limiters = tokenLimiters()
    this.perToken = limiters.perToken
    this.perAddress = limiters.perAddress
  }

  // ---- administration (session, the table's administrators) ----

  async create(actor: Actor, input: CreateTokenInput) {
    const scope = await this.access.forCategory(actor, input.catId, 'admin', input.b_o)
    const { category } = scope
    let rowId: number | null = null
    if (input.rowId !== undefined) {
      if (!/^\d+$/.test(input.rowId)) throw invalid('rowId', 'not a row id')
      rowId = Number(input.rowId)
      const row =
        categoryOfRowId(rowId) === category.id
          ? await db.from(rowTableName(category.id)).where('id', rowId).select('id').first()
          : null
      if (!row) throw rpcError('NOT_FOUND', `Row ${rowId} not found in table ${category.id}`)
    }
    let view: ViewMeta | null = null
    if (input.viewId !== undefined) {
      view = category.views.find((candidate) => candidate.id === input.viewId) ?? null
      if (!view) throw invalid('viewId', `view ${input.viewId} is not a view of this table`)
    }
    if (rowId === null && view === null)
      throw rpcError(
        'MISSING_PARAMETER',
        'Missing parameter: rowId (a row token) or viewId (a form token)',
        {
          field: 'rowId',
        }
      )
    if (input.expiresIn !== undefined && (input.expiresIn < 1 || input.expiresIn > MAX_EXPIRES_IN))
      throw invalid('expiresIn', `seconds between 1 and ${MAX_EXPIRES_IN}`)
    const visible = visibleFields(category, view)
    let required: number[] = []
    if (input.requiredFields !== undefined) {
      if (rowId !== null)
        throw invalid('requiredFields', 'only a form token (viewId without rowId) takes them')
      required = [...new Set(asIdList(input.requiredFields, 'requiredFields'))]
      const writable = new Set(visible.filter(isWritable).map((field) => field.id))
      const wrong = required.find((id) => !writable.has(id))
      if (wrong !== undefined)
        throw invalid('requiredFields', `field ${wrong} is not a writable field of the form`)
    }

    const token = `tt-${generateKey(8)}`
    const createdAt = now()
    const [id] = await db.table('table_tokens').insert({
      token_hash: hashKey(token),
      category_id: category.id,
      view_id: view?.id ?? null,
      row_id: rowId,
      read_only: Boolean(input.readOnly),
      required_fields: required.length ? JSON.stringify(required) : null,
      creator_id: actor.user.id,
      created_at: createdAt,
      expires_at: input.expiresIn === undefined ? null : createdAt + input.expiresIn,
    })
    return {
      token,
      tokenId: Number(id),
      kind: rowId === null ? 'form' : 'row',
      expiresAt: input.expiresIn === undefined ? null : createdAt + input.expiresIn,
    }
  }

  async list(actor: Actor, input: { b_o?: string; catId: number }) {
    const { category } = await this.access.forCategory(actor, input.catId, 'admin', input.b_o)
    const rows = (await db
      .from('table_tokens')
      .where('category_id', category.id)
      .orderBy('id', 'asc')) as TokenRow[]
    const codes = await this.users.codesOf(rows.map((row) => Number(row.creator_id)))
    return {
      catId: category.id,
      tokens: rows.map((row) => ({
        tokenId: Number(row.id),
        kind: row.row_id === null ? 'form' : 'row',
        rowId: row.row_id === null ? null : Number(row.row_id),
        viewId: row.view_id === null ? null : Number(row.view_id),
        readOnly: Boolean(row.read_only),
        requiredFields: requiredOf(row),
        createdBy: codes.get(Number(row.creator_id)) ?? null,
        createdAt: Number(row.created_at),
        expiresAt: row.expires_at === null ? null : Number(row.expires_at),
        revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
      })),
    }
  }

  async revoke(actor: Actor, input: { b_o?: string; tokenId: number }) {
    const row = (await db
      .from('table_tokens')
      .where('id', input.tokenId)
      .first()) as TokenRow | null
    if (!row) throw rpcError('NOT_FOUND', `Token ${input.tokenId} not found`)
    await this.access.forCategory(actor, Number(row.category_id), 'admin', input.b_o)
    const revokedAt = row.revoked_at === null ? now() : Number(row.revoked_at)
    if (row.revoked_at === null)
      await db.from('table_tokens').where('id', row.id).update({ revoked_at: revokedAt })
    return { tokenId: Number(row.id), revokedAt }
  }

  // ---- use (no session: the token) ----

  /** getTableRowByToken: the row with the fields the token shows. */
  async row(token: string, ip: string) {
    const grant = await this.grant(token, ip, 'row', 'read')
    return {
      catId: grant.category.id,
      ...(await this.rowAnswer(grant)),
      readOnly: Boolean(grant.token.read_only),
    }
  }

  /** updateTableRowByToken: writes the row's visible, writable fields. */
  async updateRow(token: string, ip: string, values: Record<string, unknown>) {
    const grant = await this.grant(token, ip, 'row', 'write')
    const checked = this.checkValues(grant, values)
    await this.writer.write(grant.actor, [{ key: String(grant.rowId), values: checked }], {
      categoryId: grant.category.id,
      bypassUrlTrigger: false,
    })
    return { catId: grant.category.id, ...(await this.rowAnswer(grant)) }
  }

  /** getNewTableRowByViewToken: the form (the view's fields, types, enum values, required flags). */
  async form(token: string, ip: string) {
    const grant = await this.grant(token, ip, 'form', 'read')
    const required = new Set(requiredOf(grant.token))
    return {
      form: {
        catId: grant.category.id,
        viewId: grant.view!.id,
        name: grant.view!.name,
        description: grant.view!.description,
        readOnly: Boolean(grant.token.read_only),
        fields: grant.fields.filter(isWritable).map((field) => ({
          id: field.id,
          name: field.name,
          code: field.code,
          type: field.type,
          description: field.description,
          required: required.has(field.id),
          ...(field.options.values ? { values: field.options.values } : {}),
          ...(field.options.multiple !== undefined ? { multiple: field.options.multiple } : {}),
          ...(field.type === 'date' ? { withTime: Boolean(field.options.withTime) } : {}),
        })),
      },
    }
  }

  /** addNewTableRowByViewToken: a new row from the form's fields; answers its id. */
  async addRow(token: string, ip: string, values: Record<string, unknown>) {
    const grant = await this.grant(token, ip, 'form', 'write')
    const checked = this.checkValues(grant, values)
    for (const fieldId of requiredOf(grant.token)) {
      const value = checked[String(fieldId)]
      if (value === undefined || value === null || String(value).trim() === '') {
        const field = grant.fields.find((candidate) => candidate.id === fieldId)
        throw rpcError(
          'MISSING_PARAMETER',
          `Missing value of required field "${field?.name ?? fieldId}"`,
          {
            field: 'fieldValues',
            fieldId,
          }
        )
      }
    }
    const result = await this.writer.write(grant.actor, [{ key: 'tmp1', values: checked }], {
      categoryId: grant.category.id,
      bypassUrlTrigger: false,
    })
    return { catId: grant.category.id, id: result.newRows[0].id }
  }

  /**
   * Rate limits (per address before the token is looked up: guessing costs the guesser; then per
   * token), then the token's validity, kind and mode, then the creator's current right.
   */
  private async grant(
    token: string,
    ip: string,
    kind: 'row' | 'form',
    need: 'read' | 'write'
  ): Promise<Grant> {
    await take(this.perAddress, addressKey(ip), `requests from ${ip}`)
    const row = (await db
      .from('table_tokens')
      .where('token_hash', hashKey(token))
      .first()) as TokenRow | null
    if (!row) throw rpcError('TOKEN_INVALID', 'Unknown token')
    await take(this.perToken, tokenKey(Number(row.id)), 'requests with this token')
    if (row.revoked_at !== null) throw rpcError('TOKEN_REVOKED', 'This token was revoked')
    if (row.expires_at !== null && Number(row.expires_at) <= now())
      throw rpcError('TOKEN_EXPIRED', 'This token has expired')
    const isRow = row.row_id !== null
    if (kind === 'row' && !isRow)
      throw invalid('token', 'a form token names no row (use getNewTableRowByViewToken)')
    if (kind === 'form' && isRow)
      throw invalid('token', 'a row token is not a form token (use getTableRowByToken)')
    if (need === 'write' && row.read_only)
      throw rpcError('TOKEN_READONLY', 'This token is read-only')

    const creator = await this.users.findById(Number(row.creator_id))
    if (!creator || creator.disabledAt)
      throw rpcError('TOKEN_INVALID', 'The creator of this token is gone')
    const actor: Actor = {
      user: creator,
      principal: creator,
      // A token write has no session: an unsaved one carries no restriction.
      session: Object.assign(new ApiSession(), { restrictions: { ...NO_RESTRICTIONS } }),
      restrictions: { ...NO_RESTRICTIONS },
      onBehalf: false,
      token: { id: Number(row.id) },
    }
    const found = await this.meta.category(Number(row.category_id))
    if (!found) throw rpcError('TOKEN_INVALID', 'The table of this token is gone')
    // The creator's right today: a token never gives more than its creator still has.
    const { category } = await this.access.forFound(actor, found, need)
    let view: ViewMeta | null = null
    if (row.view_id !== null) {
      view = category.views.find((candidate) => candidate.id === Number(row.view_id)) ?? null
      if (!view) throw rpcError('TOKEN_INVALID', 'The view of this token is gone')
    }
    const rowId = isRow ? Number(row.row_id) : null
    if (rowId !== null) {
      const exists = await db
        .from(rowTableName(category.id))
        .where('id', rowId)
        .select('id')
        .first()
      if (!exists) throw rpcError('TOKEN_INVALID', 'The row of this token is gone')
    }
    return { token: row, category, view, rowId, fields: visibleFields(category, view), actor }
  }

  /** The values sent, each naming a visible, writable field of the token (else nothing is written). */
  private checkValues(grant: Grant, values: Record<string, unknown>) {
    const writable = new Map(
      grant.fields.filter(isWritable).map((field) => [String(field.id), field])
    )
    const entries = Object.entries(values)
    if (entries.length === 0)
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: fieldValues', {
        field: 'fieldValues',
      })
    for (const [fieldId] of entries) {
      const field = writable.get(fieldId.trim())
      // Hidden, unknown and computed fields get the same answer: a hidden field's existence is not told.
      if (!field)
        throw rpcError(
          'INVALID_PARAMETER',
          `Field ${fieldId} is not a writable field of this token`,
          {
            field: 'fieldValues',
          }
        )
      if (field.readOnly) throw rpcError('FORBIDDEN', `Field "${field.name}" is read-only`)
    }
    return Object.fromEntries(entries.map(([fieldId, value]) => [fieldId.trim(), value]))
  }

  private async rowAnswer(grant: Grant) {
    const state = await db.from(rowTableName(grant.category.id)).where('id', grant.rowId!).first()
    if (!state) throw rpcError('TOKEN_INVALID', 'The row of this token is gone')
    // Activity cells are read beside the row, as getTableRows reads them.
    await this.history.attach(grant.category, grant.fields, [state])
    // A token unlocks no encrypted field: its cells answer masked (README "Encrypted fields").
    this.encryption.reveal(grant.category, [state])
    const fields: Record<string, unknown> = {}
    for (const field of grant.fields) fields[String(field.id)] = serializeCell(field, state)
    return {
      row: { id: grant.rowId, sstamp: Number(state.sstamp ?? 0), fields },
      fields: grant.fields.map((field) => ({
        id: field.id,
        name: field.name,
        code: field.code,
        type: field.type,
        readOnly: field.readOnly || COMPUTED_TYPES.has(field.type),
        ...(field.options.values ? { values: field.options.values } : {}),
      })),
    }
  }
}

/** The fields a token shows: the view's (its hidden fields left out), else every field. */
function visibleFields(category: CategoryMeta, view: ViewMeta | null): FieldDef[] {
  const hidden = new Set(view?.hiddenFields ?? [])
  return category.fields.filter((field) => !hidden.has(field.id))
}

const isWritable = (field: FieldDef) => !COMPUTED_TYPES.has(field.type)

function requiredOf(row: TokenRow): number[] {
  if (!row.required_fields) return []
  try {
    const parsed = JSON.parse(row.required_fields)
    return Array.isArray(parsed) ? parsed.map(Number) : []
  } catch {
    return []
  }
}

async function take(rate: Limiter, key: string, what: string) {
  try {
    await rate.consume(key)
  } catch (error) {
    if (!(error instanceof limiterErrors.E_TOO_MANY_REQUESTS)) throw error
    const retryAfter = Math.max(1, error.response.availableIn)
    throw rpcError('RATE_LIMITED', `Too many ${what}: retry in ${retryAfter} seconds`, {
      retryAfter,
    })
  }
}
