import { definePlugin } from '#core/plugins/define_plugin'

/** Media URLs, file uploads and resumable (tus) uploads (see README.md). */
export default definePlugin({
  id: 'media',
  version: '0.2.0',
  description: 'Media URLs (/dbi), file uploads and resumable uploads, image derivatives',
  dependsOn: ['books', 'tables'],
  operations: {
    // Spec operations (docs/spec/service-interface.md 4.A.5); the resumable upload itself is the tus endpoint (routes.ts).
    fileUpload: () => import('./operations/file_upload.js'),
    resumableUpload: () => import('./operations/resumable_upload.js'),
    // Extensions (README.md)
    setProfileImage: () => import('./operations/set_profile_image.js'),
    setBookCover: () => import('./operations/set_book_cover.js'),
  },
  // Bytes of deleted files (messages, rows, books, cells) removed after the delete committed.
  jobs: {
    'media.purge': () => import('./jobs/purge.js'),
  },
  // Deletions reach the other instances' caches of file rows (socket/realtime.ts).
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  realtime: () => import('./socket/realtime.js'),
  routes: () => import('./routes.js'),
  provider: () => import('./provider.js'),
  // No console pages: its section of the Health page (storage use).
  admin: {
    health: () => import('./admin/health.js'),
  },
})
