import { definePlugin } from '#core/plugins/define_plugin'

/** Webhooks fired by table writes (see README.md). */
export default definePlugin({
  id: 'webhooks',
  version: '0.1.0',
  description: 'Webhooks fired by table writes',
  dependsOn: ['tables'],
  operations: {},
})
