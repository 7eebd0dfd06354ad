import vine from '@vinejs/vine'
import { rpcError } from '#core/rpc/errors'
import { object, text } from '#core/rpc/wire'

export { bookOf } from '../services/book_access_service.js'

/** b_o and b_c, both optional on the wire (see bookOf). */
export const bookFields = {
  b_o: vine.string().trim().optional(),
  b_c: vine.string().trim().optional(),
}

/**
 * The member an operation names: `member`, or `login` / `u_invite` as
 * aliases (a user code, e-mail or phone; blank is "not given").
 */
export const memberFields = {
  member: text().optional(),
  login: text().optional(),
  u_invite: text().optional(),
}

/** The first of member, login and u_invite given; MISSING_PARAMETER when none is. */
export function memberOf(input: { member?: string; login?: string; u_invite?: string }): string {
  const login = input.member ?? input.login ?? input.u_invite
  if (login === undefined) {
    throw rpcError('MISSING_PARAMETER', 'Missing parameter: member (user code, e-mail or phone)', {
      field: 'member',
    })
  }
  return login
}

/**
 * A nested prefs parameter (`ownerPrefs`, `userPrefs`): a JSON object, its
 * text, or bracket form, as the wire rule object() reads it. Validators that
 * take prefs also allow unknown properties: pref keys may come as top-level
 * parameters (`title=...`, `maxMsgsOffline=...`), read by prefsOf.
 */
export const prefsField = () => object().optional()

/**
 * The prefs a request sets: the pref keys given as top-level parameters
 * (scalars only), overridden by the nested object. Undefined when none.
 */
export function prefsOf(
  input: Record<string, unknown>,
  field: string,
  kinds: Record<string, unknown>,
  aliases: string[] = []
): Record<string, unknown> | undefined {
  const flat: Record<string, unknown> = {}
  for (const key of [...Object.keys(kinds), ...aliases]) {
    const value = input[key]
    if (value !== undefined && typeof value !== 'object') flat[key] = value
  }
  const nested = (input[field] as Record<string, unknown> | undefined) ?? {}
  const merged = { ...flat, ...nested }
  return Object.keys(merged).length > 0 ? merged : undefined
}
