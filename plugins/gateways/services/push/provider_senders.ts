import type { AttemptResult } from '#core/outbox/types'
import type { ApnsClient } from './apns_client.js'
import type { FcmClient } from './fcm_client.js'
import type { PushPayload } from './push_delivery_service.js'
import type { WebPushClient } from './web_push_client.js'

/** What one provider request came to, in the outbox's terms, and whether the device is gone. */
export interface Outcome extends AttemptResult {
  gone?: boolean
}

const retryable = (status: number | null) => status === null || status === 429 || status >= 500

/** FCM HTTP v1: a notification, the data (string values), collapsed per key on Android and iOS. */
export async function sendFcm(
  client: FcmClient,
  payload: PushPayload,
  token: string
): Promise<Outcome> {
  const collapse = payload.collapseKey
  const answer = await client.send({
    token,
    notification: { title: payload.title, body: payload.body },
    data: payload.data,
    android: { collapse_key: collapse, priority: 'HIGH', notification: { tag: collapse } },
    apns: {
      headers: { 'apns-collapse-id': collapse },
      payload: { aps: { 'thread-id': collapse } },
    },
  })
  const result = { status: answer.status, response: answer.response, error: answer.code }
  const status = answer.status
  if (status !== null && status >= 200 && status < 300)
    return { ...result, outcome: 'delivered', error: null }
  if (answer.code === 'UNREGISTERED' || answer.code === 'SENDER_ID_MISMATCH' || status === 404)
    return { ...result, outcome: 'failed', gone: true }
  if (status === 401) {
    client.dropToken()
    return { ...result, outcome: 'retry' }
  }
  return { ...result, outcome: retryable(status) ? 'retry' : 'failed' }
}

/** APNs: an alert with the data as custom keys beside `aps`, threaded and collapsed per key. */
export async function sendApns(
  client: ApnsClient,
  payload: PushPayload,
  token: string
): Promise<Outcome> {
  const collapse = payload.collapseKey
  const answer = await client.send({
    deviceToken: token,
    collapseId: collapse,
    payload: {
      ...payload.data,
      aps: {
        'alert': { title: payload.title, body: payload.body },
        'sound': 'default',
        'thread-id': collapse,
      },
    },
  })
  const result = { status: answer.status, response: answer.response, error: answer.reason }
  const status = answer.status
  if (status === 200) return { ...result, outcome: 'delivered', error: null }
  if (
    status === 410 ||
    answer.reason === 'BadDeviceToken' ||
    answer.reason === 'DeviceTokenNotForTopic'
  )
    return { ...result, outcome: 'failed', gone: true }
  if (answer.reason === 'ExpiredProviderToken' || answer.reason === 'InvalidProviderToken') {
    client.dropToken()
    return { ...result, outcome: 'retry' }
  }
  return { ...result, outcome: retryable(status) ? 'retry' : 'failed' }
}

/**
 * Web Push: the notification as encrypted JSON {title, body, tag, data} (the
 * service worker shows it); `Topic` = the collapse key, so the push service
 * replaces a notification still waiting for the browser with the newer one.
 */
export async function sendWebPush(
  client: WebPushClient,
  payload: PushPayload,
  subscription: string
): Promise<Outcome> {
  const answer = await client.send(subscription, {
    topic: payload.collapseKey,
    body: JSON.stringify({
      title: payload.title,
      body: payload.body,
      tag: payload.collapseKey,
      data: payload.data,
    }),
  })
  const result = { status: answer.status, response: answer.response, error: answer.error }
  const status = answer.status
  if (status !== null && status >= 200 && status < 300)
    return { ...result, outcome: 'delivered', error: null }
  // RFC 8030 §7.3: the subscription expired or was removed (404 Not Found, 410 Gone).
  if (status === 404 || status === 410) return { ...result, outcome: 'failed', gone: true }
  if (answer.refused) return { ...result, outcome: 'failed' }
  return { ...result, outcome: retryable(status) ? 'retry' : 'failed' }
}
