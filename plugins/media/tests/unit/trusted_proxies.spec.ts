import { test } from '@japa/runner'
import { trustedProxies } from '#config/app'

test.group('TRUSTED_PROXIES (config/app.ts trustProxy)', () => {
  test('unset, empty or none trusts nobody, loopback included', ({ assert }) => {
    for (const list of [undefined, '', 'none', ' , '])
      for (const address of ['127.0.0.1', '::1', '10.1.2.3'])
        assert.isFalse(trustedProxies(list)(address), `${list}: ${address}`)
  })

  test('addresses, ranges and named ranges, IPv4-mapped addresses too', ({ assert }) => {
    const trust = trustedProxies('loopback, 10.0.0.0/8,2001:db8::7')
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '::1', '10.200.0.9', '2001:db8::7'])
      assert.isTrue(trust(address), address)
    for (const address of ['192.168.1.1', '11.0.0.1', '2001:db8::8', 'evil.example', ''])
      assert.isFalse(trust(address), address)
  })

  test('a wrong entry stops the boot', ({ assert }) => {
    assert.throws(() => trustedProxies('proxy.example'), /TRUSTED_PROXIES/)
    assert.throws(() => trustedProxies('10.0.0.0/x'), /TRUSTED_PROXIES/)
    for (const entry of ['10.0.0.0/33', '2001:db8::/129', '10.0.0.0/8/9'])
      assert.throws(() => trustedProxies(entry), /TRUSTED_PROXIES/, entry)
    assert.isTrue(trustedProxies('10.0.0.0/32, 2001:db8::/128')('10.0.0.0'))
  })
})
