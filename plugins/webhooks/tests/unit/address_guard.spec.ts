import { test } from '@japa/runner'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseRanges, refusal } from '../../lib/address_guard.js'
import { post } from '../../services/webhook_channel.js'
import { retryDelay, schedule } from '#core/outbox/backoff'

test.group('webhooks: address classifier', () => {
  test('refuses every non-public range', ({ assert }) => {
    const refused = {
      '127.0.0.1': 'loopback',
      '::1': 'loopback',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal', // cloud metadata
      'fe80::1': 'linkLocal',
      'fd00:ec2::254': 'uniqueLocal', // AWS metadata over IPv6
      '100.64.0.1': 'carrierGradeNat',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '0.0.0.0': 'unspecified',
      '::ffff:127.0.0.1': 'loopback', // IPv4-mapped is judged as IPv4
      '255.255.255.255': 'broadcast',
    }
    for (const [address, kind] of Object.entries(refused))
      assert.equal(refusal(address), `address ${address} is ${kind}`, address)
    for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])
      assert.isNull(refusal(address), address)
  })

  test('an operator may allow ranges', ({ assert }) => {
    const allowed = parseRanges('10.0.0.0/8, ::1')
    assert.isNull(refusal('10.9.9.9', allowed))
    assert.isNull(refusal('::1', allowed))
    assert.isNotNull(refusal('127.0.0.1', allowed))
    assert.isNotNull(refusal('192.168.0.1', allowed))
  })
})

test.group('webhooks: the connected address is checked', (group) => {
  let server: http.Server
  let port: number
  let hits = 0
  group.setup(async () => {
    server = http.createServer((_request, response) => {
      hits++
      response.writeHead(302, { location: 'http://127.0.0.1:1/' }).end('moved')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
    return () => new Promise<void>((resolve) => server.close(() => resolve()))
  })

  // A name whose DNS answer is loopback (what a rebinding attacker would serve).
  const resolve = ((_host: string, _options: any, callback: any) =>
    callback(null, [{ address: '127.0.0.1', family: 4 }])) as any
  const options = { timeoutMs: 2000, maxResponseBytes: 1024, excerptBytes: 100, resolve }

  test('a name resolving to loopback is refused without connecting', async ({ assert }) => {
    hits = 0
    const result = await post(`http://rebind.example:${port}/`, {}, '{}', {
      ...options,
      allowed: [],
    })
    assert.isTrue(result.refused)
    assert.match(result.error!, /rebind\.example: address 127\.0\.0\.1 is loopback/)
    assert.equal(hits, 0)
  })

  test('allowed, it connects; a redirect is an answer, not followed', async ({ assert }) => {
    hits = 0
    const result = await post(`http://rebind.example:${port}/`, {}, '{}', {
      ...options,
      allowed: parseRanges('127.0.0.0/8'),
    })
    assert.equal(result.status, 302)
    assert.equal(result.response, 'moved')
    assert.equal(hits, 1)
  })

  test('a literal loopback address is refused before connecting', async ({ assert }) => {
    hits = 0
    const result = await post(`http://127.0.0.1:${port}/`, {}, '{}', { ...options, allowed: [] })
    assert.isTrue(result.refused)
    assert.equal(hits, 0)
  })
})

test.group('outbox: backoff', () => {
  test('exponential with jitter, capped; the default schedule lasts about a day', ({ assert }) => {
    const policy = { baseMs: 10_000, factor: 3, maxMs: 6 * 3600_000, jitter: 0.2 }
    assert.equal(
      retryDelay(policy, 1, () => 0.5),
      10_000
    )
    assert.equal(
      retryDelay(policy, 2, () => 0.5),
      30_000
    )
    assert.equal(
      retryDelay(policy, 1, () => 0),
      8_000
    )
    assert.equal(
      retryDelay(policy, 1, () => 1),
      12_000
    )
    assert.equal(
      retryDelay(policy, 20, () => 0.5),
      6 * 3600_000
    )
    const total = schedule(policy, 11).reduce((sum, delay) => sum + delay, 0)
    assert.isAbove(total, 20 * 3600_000)
    assert.isBelow(total, 26 * 3600_000)
  })
})
