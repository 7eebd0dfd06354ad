import { useEffect, useRef, useState } from 'react'
import { Transmit } from '@adonisjs/transmit-client'

/** A console page's live channel, as its props give it (ConsoleFeedToken on the server). */
export interface ConsoleFeed {
  channel: string
  token: string
}

/**
 * Follows a console live channel (Transmit, authorized by the page's token) and hands each
 * notice to `onNotice`; answers whether the channel is subscribed.
 *
 * One connection per channel for the page's life: the token and the handler are read when
 * used, so a visit that renders the page again (a form's redirect back makes a new token) does
 * not tear the connection down. A new connection would miss what the server announces before it
 * is subscribed, and the page would say it follows changes while it misses them. After a
 * reconnect, `onNotice(null)` says notices may have been missed: the page reloads what it shows.
 */
export function useConsoleFeed<Notice>(
  feed: ConsoleFeed,
  onNotice: (notice: Notice | null) => void
): boolean {
  const token = useRef(feed.token)
  token.current = feed.token
  const handler = useRef(onNotice)
  handler.current = onNotice
  const [following, setFollowing] = useState(false)

  useEffect(() => {
    let subscriptions = 0
    const transmit = new Transmit({
      baseUrl: window.location.origin,
      beforeSubscribe: (request) => request.headers.set('X-Console-Token', token.current),
      onReconnectAttempt: () => setFollowing(false),
      onSubscribeFailed: () => setFollowing(false),
      onSubscription: () => {
        setFollowing(true)
        if (++subscriptions > 1) handler.current(null)
      },
    })
    const subscription = transmit.subscription(feed.channel)
    subscription.onMessage((notice: Notice) => handler.current(notice))
    void subscription.create()
    return () => {
      subscription.delete().catch(() => {})
      transmit.close()
    }
  }, [feed.channel])

  return following
}
