import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import BodyParserMiddleware from '@adonisjs/core/bodyparser_middleware'
import bodyParserConfig from '#config/bodyparser'
import type transmitService from '@adonisjs/transmit/services/main'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import { resolveActor } from '#core/auth/resolve_actor'
import type { HubStream } from './hub.js'

const header = (ctx: HttpContext, name: string) => {
  const value = ctx.request.header(name)
  return typeof value === 'string' ? value.trim() : ''
}

/** The only channels Quire publishes on: one per user, named by the user's code. */
const USER_CHANNEL = /^users\/(?!\.\.?$)[^/\s\p{Cc}]{1,128}$/u

const channelOf = (ctx: HttpContext) => {
  const channel = ctx.request.input('channel')
  return typeof channel === 'string' ? channel : ''
}

const isSubscription = (ctx: HttpContext) => ctx.route?.pattern.endsWith('__transmit/subscribe')

/** Channels of a fixed name that a plugin or the console authorizes itself (allowChannel). */
const namedChannels = new Set<string>()

/**
 * A channel of a fixed name (no parameters), authorized by `check`: the
 * console's dashboard feed (`admin/dashboard`) is one.
 */
export function allowChannel(
  transmit: typeof transmitService,
  name: string,
  check: (ctx: HttpContext) => Promise<boolean>
) {
  namedChannels.add(name)
  transmit.authorize(name, (ctx: HttpContext) => check(ctx))
}

/**
 * Transmit treats a channel that matches no authorization rule as public, and its
 * route matcher reads `users//au` or `users/av/../au` its own way: a subscription
 * is accepted only for a channel spelled exactly `users/<code>`, which the rule
 * below then authorizes for that user alone, or for a named channel.
 */
function onlyUserChannels(ctx: HttpContext, next: NextFn) {
  const channel = channelOf(ctx)
  if (!USER_CHANNEL.test(channel) && !namedChannels.has(channel)) return ctx.response.badRequest()
  return next()
}

/**
 * Registers Transmit's routes (`/__transmit/events|subscribe|unsubscribe`)
 * with only the body parser as route middleware (no server middleware, no
 * CSRF: they authenticate by sesskey), and secures the per-user channels:
 * subscribing to `users/<u_c>` needs the o_u and sesskey of that user, or of
 * a delegate allowed to act on behalf of u_c, sent as the `X-O-U` and
 * `X-Sesskey` headers (or `o_u`/`sesskey` body or query parameters).
 * Broadcasts reach this instance's subscribers only: each instance publishes
 * the deliveries it handles or receives on the socket hub's channel, so one
 * delivery to 1,000 users is one Redis message, not 1,000.
 */
export function registerTransmit(
  transmit: typeof transmitService,
  access: AccessService,
  users: UserService
): HubStream {
  // A route's middleware must be a function or a named middleware: a lazy
  // import would be called as the middleware itself and end the chain.
  const parser = new BodyParserMiddleware(bodyParserConfig)
  transmit.registerRoutes(
    (route: { use(middleware: (ctx: HttpContext, next: NextFn) => unknown): unknown }) => {
      route.use((ctx, next) =>
        parser.handle(ctx, () => (isSubscription(ctx) ? onlyUserChannels(ctx, next) : next()))
      )
    }
  )

  transmit.authorize<{ code: string }>(
    'users/:code',
    async (ctx: HttpContext, { code }: { code: string }) => {
      const login = header(ctx, 'x-o-u') || String(ctx.request.input('o_u', '') ?? '').trim()
      const sesskey =
        header(ctx, 'x-sesskey') || String(ctx.request.input('sesskey', '') ?? '').trim()
      if (login === '' || sesskey === '' || channelOf(ctx) !== `users/${code}`) return false
      try {
        const actor = await resolveActor(access, users, { o_u: login, u_c: code, sesskey })
        return actor.user.code === code
      } catch {
        return false
      }
    }
  )

  const none: ReadonlySet<string> = new Set()
  return {
    subscribedChannels() {
      const streams = transmit.getManager().getAllSubscribers()
      if (streams.size === 0) return none
      const channels = new Set<string>()
      for (const subscribed of streams.values())
        for (const channel of subscribed) channels.add(channel)
      return channels
    },
    // Local subscribers only (an empty exception list): the other instances publish
    // to theirs the deliveries they receive on the hub's channel.
    broadcast: (channel, payload) => transmit.broadcastExcept(channel, payload as any, []),
  }
}
