import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
import { fileURLToPath } from 'node:url'

/**
 * The admin console's bundle: resources/admin/app.tsx plus the pages plugins
 * contribute (plugins/<id>/admin/pages), built into public/assets and served
 * under /admin/assets (config/vite.ts). `npm run build:console` builds it;
 * `npm run dev:console` rebuilds on change.
 */
export default defineConfig({
  base: '/admin/assets/',
  plugins: [react()],
  // Plugin pages import the console's components as @console/...
  resolve: { alias: { '@console': fileURLToPath(new URL('./resources/admin', import.meta.url)) } },
  publicDir: false,
  build: {
    outDir: 'public/assets',
    emptyOutDir: true,
    manifest: true,
    assetsDir: '.',
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
    // resources/docs: the /docs page (Scalar's API reference, docs/api-reference.md).
    rollupOptions: { input: ['resources/admin/app.tsx', 'resources/docs/app.ts'] },
  },
})
