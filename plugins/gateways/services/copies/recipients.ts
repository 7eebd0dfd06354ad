import type { MessageChanging } from '#plugins/books/events'
import gatewaysConfig from '../../config.js'
import { toE164 } from '../../lib/phone.js'

/** The users a message is from (written as, its creator, the principal acting on behalf): never told of it. */
export function senderIdsOf(event: MessageChanging): number[] {
  return [event.actorId, Number(event.row.creator_id), event.onBehalfOf].filter(
    (id): id is number => typeof id === 'number' && id > 0
  )
}

/** 'First Last', else the user's code. */
export function displayName(user: { code: string; first_name?: string; last_name?: string }) {
  const name = `${user.first_name ?? ''} ${user.last_name ?? ''}`.trim()
  return name || String(user.code)
}

/** A user's phone (mob1) in E.164, or null when it is not a number an SMS can reach. */
export function smsNumber(phone: string | null | undefined) {
  return toE164(phone, gatewaysConfig.defaultRegion)
}
