import { createHash, randomBytes } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { rpcError } from '#core/rpc/errors'
import { OutboxService } from '#core/outbox/outbox_service'
import { normalizeEmail, normalizePhone } from '#core/services/user_service'
import settings from '#core/settings/main'
import { OWNER_PREF_DEFAULTS, OWNER_PREF_KINDS, parseJson, typedPrefs } from '../models/prefs.js'
import type { BookRef } from './book_access_service.js'
import '../events.js'

export const ADDRESS_INVITATIONS = 'book_address_invitations'

const DAY_MS = 24 * 60 * 60 * 1000
/** Read at each invitation: tests and operators may change it without a restart. */
const ttlMs = () => settings.integer('books.addressInvitationTtlDays') * DAY_MS

/** One @, no spaces, a dot in the domain: what a mail relay can be asked to reach. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/
const PHONE_LIKE = /^\+?[\d\s().-]+$/

export interface InvitationAddress {
  kind: 'email' | 'phone'
  address: string
}

export interface AddressInvitationRow {
  id: number
  book_id: number
  kind: 'email' | 'phone'
  address: string
  right: number
  invited_by: number
  expires_at: number
}

/** What the link's page shows. */
export interface InvitationPage {
  title: string
  b_o: string
  b_c: string
  inviter: string
  kind: 'email' | 'phone'
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/**
 * The address a login names when no account has it: an e-mail address
 * (lower-cased) or a phone number (digits and a leading +, as users.phone
 * stores it, so that an account created with the number finds it); null when
 * it is neither (an unknown user code). A malformed e-mail or a number of
 * the wrong length is INVALID_PARAMETER.
 */
export function invitationAddressOf(login: string): InvitationAddress | null {
  const trimmed = login.trim()
  if (trimmed.includes('@')) {
    if (!EMAIL.test(trimmed) || trimmed.length > 191)
      throw rpcError('INVALID_PARAMETER', 'Invalid parameter member: not an e-mail address', {
        field: 'member',
      })
    return { kind: 'email', address: normalizeEmail(trimmed) }
  }
  if (!PHONE_LIKE.test(trimmed)) return null
  const phone = normalizePhone(trimmed)
  const digits = phone.replace(/^\+/, '')
  // E.164 numbers have at most 15 digits; fewer than 6 is no reachable number.
  if (digits.length < 6 || digits.length > 15 || digits.includes('+'))
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter member: not a phone number', {
      field: 'member',
    })
  return { kind: 'phone', address: phone }
}

/**
 * Invitations to an address with no account (issue 19 item 6): one row per
 * book and address, refreshed (new token, right, inviter, expiry) when the
 * address is invited again. The link is staged with the row on the
 * in-transaction topic `books:address_invited` (the gateways plugin sends it
 * by e-mail or SMS); MemberService turns the rows into invitations when an
 * account with the address is created.
 */
@inject()
export class AddressInvitationService {
  constructor(private outbox: OutboxService) {}

  /** Inside the inviteMember write: stores (or refreshes) the row and stages its link. */
  async store(
    trx: TransactionClientContract,
    stamp: number,
    afterCommit: (callback: () => unknown) => void,
    book: BookRef,
    target: InvitationAddress,
    right: number,
    actorId: number
  ) {
    const token = randomBytes(32).toString('base64url')
    const now = Date.now()
    const fields = {
      kind: target.kind,
      token_hash: hashToken(token),
      right,
      invited_by: actorId,
      expires_at: now + ttlMs(),
      updated_at: now,
    }
    // One row per book and address: inviting again (even concurrently) refreshes it.
    await trx
      .knexQuery()
      .table(ADDRESS_INVITATIONS)
      .insert({ ...fields, book_id: book.id, address: target.address, created_at: now })
      .onConflict(['book_id', 'address'])
      .merge(fields)
    const row = await trx
      .from(ADDRESS_INVITATIONS)
      .where('book_id', book.id)
      .where('address', target.address)
      .select('id')
      .first()
    const invitationId = Number(row.id)
    if (this.outbox.wants('books:address_invited', { bookId: book.id }))
      await this.outbox.stage(
        trx,
        'books:address_invited',
        {
          bookId: book.id,
          b_o: book.b_o,
          b_c: book.b_c,
          kind: target.kind,
          address: target.address,
          invitationId,
          token,
          actorId,
          expiresAt: fields.expires_at,
          stamp,
        },
        afterCommit
      )
  }

  /**
   * Inside the new account's write: the live rows for its e-mail or phone,
   * deleted with the expired ones for the same addresses.
   */
  async take(trx: TransactionClientContract, addresses: string[]): Promise<AddressInvitationRow[]> {
    if (addresses.length === 0) return []
    const rows = (await trx
      .from(ADDRESS_INVITATIONS)
      .whereIn('address', addresses)
      .orderBy('id')) as AddressInvitationRow[]
    if (rows.length === 0) return []
    await trx
      .from(ADDRESS_INVITATIONS)
      .whereIn(
        'id',
        rows.map((row) => row.id)
      )
      .delete()
    const now = Date.now()
    return rows.filter((row) => Number(row.expires_at) > now)
  }

  /** The link's page: the live invitation of a token, or null (unknown or expired). */
  async page(token: string): Promise<InvitationPage | null> {
    if (token.length === 0 || token.length > 100) return null
    const row = await db
      .from(`${ADDRESS_INVITATIONS} as i`)
      .join('books as b', 'b.id', 'i.book_id')
      .join('users as o', 'o.id', 'b.owner_id')
      .join('users as u', 'u.id', 'i.invited_by')
      .where('i.token_hash', hashToken(token))
      .where('i.expires_at', '>', Date.now())
      .select(
        'i.kind',
        'b.code as b_c',
        'b.owner_prefs',
        'o.code as b_o',
        'u.code as inviter_code',
        'u.first_name',
        'u.last_name'
      )
      .first()
    if (!row) return null
    const title = typedPrefs(
      OWNER_PREF_KINDS,
      OWNER_PREF_DEFAULTS,
      parseJson(row.owner_prefs, null)
    ).title
    const name = `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim()
    return {
      title: String(title || row.b_c),
      b_o: String(row.b_o),
      b_c: String(row.b_c),
      inviter: name ? `${name} (${row.inviter_code})` : String(row.inviter_code),
      kind: row.kind,
    }
  }
}
