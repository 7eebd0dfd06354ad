import { randomBytes } from 'node:crypto'
import type { Group } from '@japa/runner/core'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { OutboxService } from '#core/outbox/outbox_service'
import { waitFor } from '#tests/helpers/queue'
import { book, client, share, type Client } from '#plugins/books/tests/helpers/books'
import gatewaysConfig from '#plugins/gateways/config'
import {
  startFakeApns,
  startFakeFcm,
  startFakeWebPush,
  type FakeApns,
  type FakeFcm,
  type FakeWebPush,
} from './push_fakes.js'

export const fcmToken = () =>
  `${randomBytes(11).toString('base64url')}:APA91b${randomBytes(100).toString('base64url')}`
export const apnsToken = () => randomBytes(32).toString('hex')

/** updatePushId as `who`; answers the deviceID. */
export async function register(who: Client, deviceType: string, registrationID: string) {
  const answer = await who.call({ req: 'updatePushId', deviceType, registrationID })
  if (answer.status !== 'ok') throw new Error(`updatePushId failed: ${JSON.stringify(answer)}`)
  return answer.deviceID as number
}

/** A new owner's book (createBook extras) shared with `count` new members who accepted. */
export async function sharedWith(count: number, extra: Record<string, unknown> = {}) {
  const owner = await client()
  const target = await book(owner, extra)
  const members: Client[] = []
  for (let index = 0; index < count; index++) {
    const member = await client()
    await share(owner, target, member)
    members.push(member)
  }
  return { owner, target, members }
}

export const deliveriesOf = (deviceId: number) =>
  db.from('outbox_deliveries').where('recipient', `device:${deviceId}`).orderBy('id')

/** Waits until the device has `count` deliveries, all finished; answers them. */
export async function settled(deviceId: number, count: number) {
  return waitFor(
    async () => {
      const rows = await deliveriesOf(deviceId)
      return (
        rows.length === count &&
        rows.every((row) => ['delivered', 'failed', 'cancelled'].includes(row.state)) &&
        rows
      )
    },
    10_000,
    `the ${count} deliveries of device ${deviceId} to finish`
  )
}

export interface PushFakes {
  fcm: FakeFcm
  apns: FakeApns
  web: FakeWebPush
}

/**
 * The group's local FCM, APNs and Web Push services, Quire's settings
 * pointed at them (Web Push: http endpoints on 127.0.0.1 allowed), a short
 * outbox backoff; restored afterwards. After each test, a refusal by a
 * fake fails that test (unless the test cleared it, having provoked it).
 */
export function usePushFakes(group: Group): PushFakes {
  const fakes = {} as PushFakes
  group.setup(async () => {
    const [fcm, apns, web] = await Promise.all([
      startFakeFcm(),
      startFakeApns(),
      startFakeWebPush(),
    ])
    Object.assign(fakes, { fcm, apns, web })
    const outbox = await app.container.make(OutboxService)
    const saved = {
      fcm: { ...gatewaysConfig.fcm },
      apns: { ...gatewaysConfig.apns },
      webPush: { ...gatewaysConfig.webPush },
      backoff: { ...outbox.settings.backoff },
    }
    Object.assign(gatewaysConfig.fcm, {
      serviceAccount: fcm.serviceAccount,
      projectId: undefined,
      baseUrl: fcm.url,
      tokenUrl: undefined,
    })
    Object.assign(gatewaysConfig.apns, {
      key: apns.key,
      keyId: apns.keyId,
      teamId: apns.teamId,
      topic: apns.topic,
      baseUrl: apns.url,
    })
    Object.assign(gatewaysConfig.webPush, {
      ...web.vapid,
      endpointHosts: ['127.0.0.1'],
      allowHttp: true,
    })
    outbox.settings.backoff.baseMs = 30
    outbox.settings.backoff.maxMs = 100
    return async () => {
      Object.assign(gatewaysConfig.fcm, saved.fcm)
      Object.assign(gatewaysConfig.apns, saved.apns)
      Object.assign(gatewaysConfig.webPush, saved.webPush)
      Object.assign(outbox.settings.backoff, saved.backoff)
      await Promise.all([fcm.close(), apns.close(), web.close()])
    }
  })
  group.each.teardown(() => {
    fakes.fcm.gate = null
    const refused = [...fakes.fcm.rejected, ...fakes.apns.rejected, ...fakes.web.rejected]
    // Cleared before failing: one test's refusals are not blamed on the next.
    fakes.fcm.rejected.length = 0
    fakes.apns.rejected.length = 0
    fakes.web.rejected.length = 0
    if (refused.length) throw new Error(`a fake provider refused: ${refused.join('; ')}`)
  })
  return fakes
}
