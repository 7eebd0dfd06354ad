import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { serverUrl } from '#tests/helpers/server'
import gatewaysConfig from '#plugins/gateways/config'

const PRIVATE_TOKEN = 'quire-private-token-for-tests'

/**
 * The requests the SMS Gateway for Android app sends in private-server mode
 * (its GatewayApi: ktor with gson, the base URL the user typed), byte for byte
 * what matters: method, path, Authorization, JSON body.
 */
function phone(method: 'POST' | 'PATCH', bearer: string | null, body: unknown) {
  return fetch(`${serverUrl()}/api/mobile/v1/device`, {
    method,
    headers: {
      'User-Agent': 'me.capcom.smsgateway/1.40.0',
      'Accept': 'application/json',
      'Content-Type': 'application/json',
      ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

const register = (bearer: string | null, body: unknown = { name: 'Pixel 7', pushToken: null }) =>
  phone('POST', bearer, body)

async function json(response: Response): Promise<Record<string, any>> {
  const body = await response.json()
  return body as Record<string, any>
}

/** A device registered as the app registers one: its id and bearer token. */
async function registered(body?: unknown) {
  const response = await register(PRIVATE_TOKEN, body)
  return json(response)
}

const countDevices = async () => {
  const [count] = await db.from('gateways_android_devices').count('* as n')
  return Number(count.n)
}

test.group('gateways: SMS Gateway for Android device API', (group) => {
  group.each.setup(() => {
    const configured = gatewaysConfig.androidPrivateToken
    gatewaysConfig.androidPrivateToken = PRIVATE_TOKEN
    return () => {
      gatewaysConfig.androidPrivateToken = configured
    }
  })

  test('registration with the private token answers 201 with id, token, login and password', async ({
    assert,
  }) => {
    const response = await register(PRIVATE_TOKEN, {
      name: 'Pixel 7',
      pushToken: 'fcm-token-1:APA91b',
    })
    assert.equal(response.status, 201)
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    const body = await json(response)
    // An id never begins with "-": an operator pastes it after gateway:allow --device.
    assert.match(body.id, /^[A-Za-z\d][\w-]{20}$/)
    assert.match(body.token, /^[\w-]{21}$/)
    assert.match(body.login, /^[A-Z\d_-]{6}$/)
    assert.match(body.password, /^[a-z\d_-]{14}$/)
    const row = await db.from('gateways_android_devices').where('id', body.id).first()
    assert.equal(row.name, 'Pixel 7')
    assert.equal(row.push_token, 'fcm-token-1:APA91b')
    assert.notEqual(row.token_hash, body.token)
    assert.equal(row.login, body.login)
    assert.notEqual(row.password_hash, body.password)
  })

  test('registration without the private token, or with another, answers 401 and stores nothing', async ({
    assert,
  }) => {
    const before = await countDevices()
    for (const bearer of [null, 'wrong-token', '']) {
      const response = await register(bearer)
      assert.equal(response.status, 401, String(bearer))
      const { message } = await json(response)
      assert.isString(message)
    }
    gatewaysConfig.androidPrivateToken = undefined
    const off = await register(PRIVATE_TOKEN)
    assert.equal(off.status, 401)
    assert.equal(await countDevices(), before)
  })

  test('a malformed registration answers 400 and stores nothing', async ({ assert }) => {
    const before = await countDevices()
    for (const body of ['{not json', { name: 'x'.repeat(129) }, { pushToken: 'p'.repeat(257) }]) {
      const response = await register(PRIVATE_TOKEN, body)
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 40))
      const { message } = await json(response)
      assert.isString(message)
    }
    assert.equal(await countDevices(), before)
  })

  test('the device updates its push token with its own token and id (204)', async ({ assert }) => {
    const device = await registered()
    const response = await phone('PATCH', device.token, {
      id: device.id,
      pushToken: 'fcm-token-2:APA91b',
    })
    assert.equal(response.status, 204)
    assert.equal(await response.text(), '')
    const row = await db.from('gateways_android_devices').where('id', device.id).first()
    assert.equal(row.push_token, 'fcm-token-2:APA91b')
  })

  test('a push token update with another device’s id answers 403, with a bad token 401, and changes nothing', async ({
    assert,
  }) => {
    const mine = await registered({ name: 'A', pushToken: 'a' })
    const other = await registered({ name: 'B', pushToken: 'b' })
    const forbidden = await phone('PATCH', mine.token, { id: other.id, pushToken: 'stolen' })
    assert.equal(forbidden.status, 403)
    const unauthorized = await phone('PATCH', 'not-a-device-token', {
      id: mine.id,
      pushToken: 'x',
    })
    assert.equal(unauthorized.status, 401)
    const missing = await phone('PATCH', mine.token, { pushToken: 'no id' })
    assert.equal(missing.status, 400)
    const tooLong = await phone('PATCH', mine.token, { id: mine.id, pushToken: 'p'.repeat(257) })
    assert.equal(tooLong.status, 400)
    const rows = await db
      .from('gateways_android_devices')
      .whereIn('id', [mine.id, other.id])
      .orderBy('name')
    assert.deepEqual(
      rows.map((row) => row.push_token),
      ['a', 'b']
    )
  })
})
