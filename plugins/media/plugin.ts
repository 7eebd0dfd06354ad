import { definePlugin } from '#core/plugins/define_plugin'

/** Media URLs, file uploads and resumable (tus) uploads (see README.md). */
export default definePlugin({
  id: 'media',
  version: '0.1.0',
  description: 'Media URLs, file uploads and resumable uploads',
  dependsOn: ['books'],
  operations: {},
})
