import { test } from '@japa/runner'
import User from '#models/user'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { definePlugin } from '#core/plugins/define_plugin'
import { navigationFor } from '#admin/navigation'

function administrator(rights: Record<string, boolean> = {}) {
  const user = new User()
  user.merge({ code: 'boss', isAdmin: true, rights })
  return user
}

const registry = () => {
  const plugins = new PluginRegistry()
  plugins.register(
    definePlugin({ id: 'polls', version: '1.0.0', admin: { nav: [{ label: 'Polls' }] } }),
    null
  )
  plugins.register(
    definePlugin({
      id: 'billing',
      version: '1.0.0',
      admin: {
        permission: 'billing',
        nav: [
          { label: 'Invoices', path: '/invoices' },
          { label: 'Refunds', path: '/refunds', permission: 'refunds' },
        ],
      },
    }),
    null
  )
  return plugins
}

test.group('console navigation', () => {
  test('built from the manifests, in plugin order, between the kernel pages', ({ assert }) => {
    const nav = navigationFor(registry(), administrator({ billing: true, refunds: true }))
    assert.deepEqual(
      nav.map((entry) => [entry.label, entry.href, entry.source]),
      [
        ['Dashboard', '/admin', 'core'],
        ['Users', '/admin/users', 'core'],
        ['Polls', '/admin/polls', 'polls'],
        ['Invoices', '/admin/billing/invoices', 'billing'],
        ['Refunds', '/admin/billing/refunds', 'billing'],
        ['Audit log', '/admin/audit', 'core'],
        ['Health', '/admin/health', 'core'],
        ['Settings', '/admin/settings', 'core'],
        ['Plugins', '/admin/plugins', 'core'],
      ]
    )
  })

  test("filtered by the administrator rights: the section permission, and the entry's own too", ({
    assert,
  }) => {
    const labels = (rights: Record<string, boolean>) =>
      navigationFor(registry(), administrator(rights)).map((entry) => entry.label)
    assert.notInclude(labels({}), 'Invoices')
    assert.include(labels({ billing: true }), 'Invoices')
    assert.notInclude(labels({ billing: true }), 'Refunds')
    assert.notInclude(labels({ refunds: true }), 'Refunds')
    assert.include(labels({ billing: true, refunds: true }), 'Refunds')
    const nobody = new User()
    nobody.merge({ code: 'nobody', isAdmin: false, rights: {} })
    assert.deepEqual(navigationFor(registry(), nobody), [])
  })
})
