import { definePlugin } from '#core/plugins/define_plugin'

/** SMS gateways and push devices (see README.md). */
export default definePlugin({
  id: 'gateways',
  version: '0.1.0',
  description: 'SMS gateways and push devices',
  dependsOn: ['books'],
  operations: {},
})
