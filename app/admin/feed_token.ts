import type { HttpContext } from '@adonisjs/core/http'
import encryption from '@adonisjs/core/services/encryption'
import User from '#models/user'

/**
 * The token a console page's live channel subscribes with (Transmit's
 * requests carry no console session): an administrator's id, encrypted for
 * one purpose (one channel), valid two hours. The dashboard's feed and
 * plugins' feeds (the tables grid) use the same.
 */
export const ConsoleFeedToken = {
  for(userId: number, purpose: string) {
    return encryption.encrypt({ userId }, '2 hours', purpose)
  },

  /** Whether the subscriber's token names an administrator who may still use the console. */
  async authorize(ctx: HttpContext, purpose: string) {
    const token = ctx.request.header('x-console-token') ?? ''
    const claim = token ? encryption.decrypt<{ userId: number }>(token, purpose) : null
    if (!claim?.userId) return false
    const user = await User.find(claim.userId)
    return Boolean(user?.isAdmin && !user.disabledAt)
  },
}
