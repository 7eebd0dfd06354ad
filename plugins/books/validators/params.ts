import vine from '@vinejs/vine'
import { rpcError } from '#core/rpc/errors'
import { looseText, object, stamp, text } from '#core/rpc/wire'

export { bookOf } from '../services/book_access_service.js'

/**
 * b_o and b_c, both optional on the wire (see bookOf), read with the rule the socket's system
 * messages read them with (text()): trimmed, blank is "not given", a JSON number is read as its
 * digits; a list or an object is refused.
 */
export const bookFields = {
  b_o: text().optional(),
  b_c: text().optional(),
}

/**
 * A message as sendMsg (api.php) and the socket's send message (type 1) both read it: one set of
 * rules, so a value gets the same verdict on both entry points
 * (tests/functional/socket/same_verdict.spec.ts). Texts follow the kernel's text rules: a JSON
 * number or boolean is read as its text (JSON bodies and frames carry JSON values, forms carry
 * text), a list or an object is refused (INVALID_PARAMETER). Message texts are kept as sent;
 * uuid and msgColor are trimmed. Lengths (msg, body + bodyHtml, msgColor, uuid) and the content a
 * new message needs are checked by MessageWriter, for both. `event` is read as received (a JSON
 * object, its text, bracket form, or null / "null" to remove it): EventService.parse checks it.
 */
export const messageFields = {
  ...bookFields,
  msg: looseText().optional(),
  body: looseText().optional(),
  msgBody: looseText().optional(),
  bodyHtml: looseText().optional(),
  msgBodyHTML: looseText().optional(),
  nbMedias: stamp().optional(),
  nbDocs: stamp().optional(),
  uuid: looseText().trim().optional(),
  msgColor: looseText().trim().optional(),
  event: vine.any().nullable().optional(),
}

/** A message's bodies, whichever spelling was sent (the spec's example spells `msgBody`). */
export function messageBodies(input: {
  body?: string
  msgBody?: string
  bodyHtml?: string
  msgBodyHTML?: string
}) {
  return { body: input.body ?? input.msgBody, bodyHtml: input.bodyHtml ?? input.msgBodyHTML }
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
