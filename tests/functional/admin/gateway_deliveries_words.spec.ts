import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import { makeUser } from '#tests/helpers/users'
import { pageOf, signedInAdmin } from './console_client.js'

/**
 * The gateways' deliveries page says who a delivery goes to in words: a push's device by its
 * kind and owner, a web alarm's user, a reminder's people, an address; never `device:2`.
 * The rows are written finished (cancelled), so no outbox pump picks them up.
 */
test.group('console: gateway deliveries say who they go to', () => {
  test('a device by its kind and owner, a user by name, a reminder, an address, a device since removed', async ({
    assert,
  }) => {
    const { client } = await signedInAdmin()
    const owner = await makeUser()
    const now = DateTime.now().toSQL({ includeOffset: false })
    const token = randomUUID()
    const [deviceId] = await db.table('gateways_push_devices').insert({
      user_id: owner.id,
      device_type: 'ios_dt_v2',
      registration_id: token,
      registration_hash: token.replaceAll('-', '').padEnd(64, '0'),
      active: true,
      created_at: now,
      updated_at: now,
    })
    const tag = randomUUID().slice(0, 8)
    const stamp = Date.now()
    const recipients: [string, string][] = [
      ['push_apns', `device:${deviceId}`],
      ['push_fcm', 'device:999999999'],
      ['alarm', `user:${owner.id}`],
      ['reminder', 'message:abc123'],
      ['mail', `someone.${tag}@example.test`],
    ]
    const ids: number[] = []
    for (const [index, [channel, recipient]] of recipients.entries()) {
      const [id] = await db.table('outbox_deliveries').insert({
        channel,
        recipient,
        idempotency_key: `words-${tag}-${index}`,
        event_type: `words${tag}`,
        payload: '{}',
        state: 'cancelled',
        attempts: 0,
        max_attempts: 1,
        next_attempt_at: stamp,
        created_at: stamp,
        updated_at: stamp,
        finished_at: stamp,
      })
      ids.push(Number(id))
    }
    const page = await pageOf(client, `/admin/gateways/deliveries?search=words${tag}`)
    const items = page.props.deliveries.items as { id: number; recipient: string; to: string }[]
    const toOf = (id: number) => items.find((item) => item.id === id)?.to
    const name = `${owner.firstName} ${owner.lastName} (${owner.code})`
    assert.lengthOf(items, recipients.length, JSON.stringify(items))
    assert.equal(toOf(ids[0]), `iPhone of ${name}`)
    assert.equal(toOf(ids[1]), 'A device no longer registered')
    assert.equal(toOf(ids[2]), `${name}, in the web app`)
    assert.equal(toOf(ids[3]), 'The people the reminder of a message is for')
    assert.equal(toOf(ids[4]), `someone.${tag}@example.test`)
    for (const item of items) assert.notMatch(item.to, /^(device|user|message):/)
    // The delivery's own page says the same.
    const one = await pageOf(client, `/admin/gateways/deliveries/${ids[0]}`)
    assert.equal(one.props.delivery.to, `iPhone of ${name}`)
    await db.from('outbox_deliveries').whereIn('id', ids).delete()
    await db.from('gateways_push_devices').where('id', deviceId).delete()
  })
})
