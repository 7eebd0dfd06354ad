import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { client, expectNok, sessionOf } from '#plugins/books/tests/helpers/books'

/** A FCM registration token in its usual shape (a :APA91b... suffix). */
const fcmToken = (tag: string) => `f${tag}Xy:APA91bH${'k'.repeat(140)}-_${tag}`
const apnsToken = (digit: string) => digit.repeat(64)

const deviceRow = (id: number) => db.from('gateways_push_devices').where('id', id).first()
async function deviceField(id: number, field: string) {
  const row = await deviceRow(id)
  return row[field]
}
const devicesOf = (userId: number) => db.from('gateways_push_devices').where('user_id', userId)

test.group('gateways: updatePushId', () => {
  test('a first registration answers a numeric deviceID and stores the device', async ({
    assert,
  }) => {
    const alice = await client()
    const info = await alice.call({ req: 'getUserInfo' })
    const token = fcmToken('a')
    const answer = await alice.call({
      req: 'updatePushId',
      u_c: alice.code,
      deviceID: '',
      deviceType: 'gcm_rid',
      registrationID: token,
      projectID: info.userInfo.projectID,
    })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.isNumber(answer.deviceID)
    assert.isAbove(answer.deviceID, 0)
    const row = await deviceRow(answer.deviceID)
    assert.equal(Number(row.user_id), alice.user.id)
    assert.equal(row.device_type, 'gcm_rid')
    assert.equal(row.registration_id, token)
    assert.isTrue(Boolean(row.active))
    assert.equal(Number(row.project_id), info.userInfo.projectID)
  })

  test('the deviceID updates its registrationID and type in place', async ({ assert }) => {
    const alice = await client()
    const first = await alice.call({
      req: 'updatePushId',
      deviceType: 'ios_dt',
      registrationID: `<${apnsToken('a')
        .replace(/(.{8})/g, '$1 ')
        .trim()}>`,
    })
    assert.equal(first.status, 'ok', JSON.stringify(first))
    // The <hex hex ...> form old iOS clients send is stored as plain lowercase hex.
    assert.equal(await deviceField(first.deviceID, 'registration_id'), apnsToken('a'))

    const second = await alice.call({
      req: 'updatePushId',
      deviceID: first.deviceID,
      deviceType: 'ios_dt_v2',
      registrationID: apnsToken('B'),
    })
    assert.equal(second.deviceID, first.deviceID)
    const rows = await devicesOf(alice.user.id)
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].device_type, 'ios_dt_v2')
    assert.equal(rows[0].registration_id, apnsToken('b'))
  })

  test('active=FALSE (or false, 0) deactivates, TRUE reactivates', async ({ assert }) => {
    const alice = await client()
    const { deviceID } = await alice.call({
      req: 'updatePushId',
      deviceType: 'gcm_nk',
      registrationID: fcmToken('b'),
    })
    for (const [active, expected] of [
      ['FALSE', false],
      ['TRUE', true],
      ['false', false],
      ['1', true],
      ['0', false],
    ] as const) {
      const answer = await alice.call({ req: 'updatePushId', deviceID, active })
      assert.equal(answer.status, 'ok', JSON.stringify(answer))
      assert.equal(answer.deviceID, deviceID)
      assert.equal(Boolean(await deviceField(deviceID, 'active')), expected, active)
    }
  })

  test('registering a known token again without its deviceID answers the same device', async ({
    assert,
  }) => {
    const alice = await client()
    const token = fcmToken('c')
    const register = (who: typeof alice) =>
      who.call({ req: 'updatePushId', deviceType: 'gcm_rid', registrationID: token })
    const first = await register(alice)
    const again = await register(alice)
    assert.equal(again.deviceID, first.deviceID)
    assert.lengthOf(await devicesOf(alice.user.id), 1)

    // The same phone signed in as another user: the device now notifies that user.
    const bob = await client()
    const moved = await register(bob)
    assert.equal(moved.deviceID, first.deviceID)
    assert.lengthOf(await devicesOf(alice.user.id), 0)
    assert.equal(Number(await deviceField(first.deviceID, 'user_id')), bob.user.id)
  })

  test('bad input answers the documented codes and stores nothing', async ({ assert }) => {
    const alice = await client()
    const cases: [Record<string, unknown>, string, string][] = [
      [{ deviceType: 'apns', registrationID: fcmToken('d') }, 'INVALID_PARAMETER', 'deviceType'],
      [{ registrationID: fcmToken('d') }, 'MISSING_PARAMETER', 'deviceType'],
      [{ deviceType: 'gcm_rid' }, 'MISSING_PARAMETER', 'registrationID'],
      [
        { deviceType: 'gcm_rid', registrationID: 'has spaces in it' },
        'INVALID_PARAMETER',
        'registrationID',
      ],
      [{ deviceType: 'ios_dt', registrationID: 'abc123' }, 'INVALID_PARAMETER', 'registrationID'],
      [{ deviceType: 'bb_dt', registrationID: 'zz' }, 'INVALID_PARAMETER', 'registrationID'],
      [
        { deviceType: 'win_uri', registrationID: 'http://example.test/x' },
        'INVALID_PARAMETER',
        'registrationID',
      ],
      [
        { deviceType: 'gcm_rid', registrationID: 'x'.repeat(5000) },
        'INVALID_PARAMETER',
        'registrationID',
      ],
      [
        { deviceType: 'gcm_rid', registrationID: fcmToken('d'), active: 'maybe' },
        'INVALID_PARAMETER',
        'active',
      ],
      [
        { deviceType: 'gcm_rid', registrationID: fcmToken('d'), deviceID: 'x' },
        'INVALID_PARAMETER',
        'deviceID',
      ],
      [
        { deviceType: 'gcm_rid', registrationID: fcmToken('d'), projectID: 987654 },
        'INVALID_PARAMETER',
        'projectID',
      ],
    ]
    for (const [params, code, field] of cases) {
      const answer = await alice.call({ req: 'updatePushId', ...params })
      expectNok(assert, answer, code)
      assert.equal(answer.field, field, JSON.stringify(answer))
    }
    assert.lengthOf(await devicesOf(alice.user.id), 0)
  })

  test('another user’s deviceID answers NOT_FOUND and the device is unchanged', async ({
    assert,
  }) => {
    const alice = await client()
    const bob = await client()
    const token = fcmToken('e')
    const { deviceID } = await alice.call({
      req: 'updatePushId',
      deviceType: 'gcm_rid',
      registrationID: token,
    })
    const answer = await bob.call({
      req: 'updatePushId',
      deviceID,
      active: 'FALSE',
      deviceType: 'gcm_rid',
      registrationID: fcmToken('f'),
    })
    expectNok(assert, answer, 'NOT_FOUND')
    const row = await deviceRow(deviceID)
    assert.equal(Number(row.user_id), alice.user.id)
    assert.equal(row.registration_id, token)
    assert.isTrue(Boolean(row.active))
    assert.lengthOf(await devicesOf(bob.user.id), 0)
  })

  test('a read-only session is refused with READONLY_SESSION', async ({ assert }) => {
    const alice = await client()
    const readonly = await sessionOf(alice, 'readonly')
    const answer = await readonly.call({
      req: 'updatePushId',
      deviceType: 'win_uri',
      registrationID: 'https://push.example.test/channel/1',
    })
    expectNok(assert, answer, 'READONLY_SESSION')
    assert.lengthOf(await devicesOf(alice.user.id), 0)
  })
})
