import { defineConfig } from '@adonisjs/vite'

/**
 * The console's assets, built by `vite build` into public/assets and served
 * under /admin/assets by the console's own route. Quire always serves the
 * build (no Vite dev server inside the app: see app/admin/console_provider.ts).
 */
const viteBackendConfig = defineConfig({
  buildDirectory: 'public/assets',
  assetsUrl: '/admin/assets',
})

export default viteBackendConfig
