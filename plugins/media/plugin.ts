import { definePlugin } from '#core/plugins/define_plugin'

/** Media URLs, file uploads and resumable (tus) uploads (see README.md). */
export default definePlugin({
  id: 'media',
  version: '0.2.0',
  description: 'Media URLs (/dbi), file uploads and resumable uploads, image derivatives',
  dependsOn: ['books', 'tables'],
  operations: {
    fileUpload: () => import('./operations/file_upload.js'),
  },
  routes: () => import('./routes.js'),
  provider: () => import('./provider.js'),
})
