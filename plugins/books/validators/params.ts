import vine from '@vinejs/vine'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import type { Params } from '#core/rpc/params'
import { parseJson } from '../models/prefs.js'

/** b_o and b_c, both optional on the wire (see bookOf). */
export const bookFields = {
  b_o: vine.string().trim().optional(),
  b_c: vine.string().trim().optional(),
}

/**
 * The book an operation names: b_c is required (a restricted session
 * defaults to its book); b_o defaults to the session's book owner, then to
 * the acting user (u_c), as sendMsg does.
 */
export function bookOf(actor: Actor, input: { b_o?: string; b_c?: string }) {
  const code = input.b_c || actor.restrictions.carnet_code || ''
  if (code === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: b_c', { field: 'b_c' })
  const owner = input.b_o || actor.restrictions.carnet_owner || actor.user.code
  return { b_o: owner, b_c: code }
}

/** A nested parameter given in bracket form (an object) or as a JSON string. */
export function objectParam(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  if (typeof value === 'string') {
    const parsed = parseJson<unknown>(value.trim(), undefined)
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>
  }
  throw rpcError('INVALID_PARAMETER', `Invalid parameter ${field}: expected a JSON object`, {
    field,
  })
}

/** Pref keys sent as top-level parameters (`title=...`, `maxMsgsOffline=...`), merged under the nested object. */
export function prefsFrom(
  params: Params,
  field: string,
  kinds: Record<string, unknown>,
  aliases: string[] = []
) {
  const flat: Record<string, unknown> = {}
  for (const key of [...Object.keys(kinds), ...aliases]) {
    if (params[key] !== undefined && typeof params[key] !== 'object') flat[key] = params[key]
  }
  const nested = objectParam(params[field], field) ?? {}
  const merged = { ...flat, ...nested }
  return Object.keys(merged).length > 0 ? merged : undefined
}

/** The member an operation names: `member`, or `login` / `u_invite` as aliases. */
export function memberLogin(params: Params): string {
  for (const key of ['member', 'login', 'u_invite']) {
    const value = params[key]
    if (typeof value === 'string' && value.trim() !== '') return value.trim()
  }
  throw rpcError('MISSING_PARAMETER', 'Missing parameter: member (user code, e-mail or phone)', {
    field: 'member',
  })
}
