import { defineConfig } from '@adonisjs/inertia'

/** The admin console's Inertia settings (resources/admin, rendered into resources/views/inertia_layout.edge). */
const inertiaConfig = defineConfig({
  rootView: 'inertia_layout',
  entrypoint: 'resources/admin/app.tsx',
  sharedData: {},
  ssr: { enabled: false },
  /**
   * Each page's props are kept in the browser history encrypted (AES-GCM, a key in
   * sessionStorage) and the key is dropped at sign-out (the sign-in page clears the
   * history): the back button after sign-out shows no console data. The browser only
   * encrypts in a secure context (HTTPS, or localhost).
   */
  history: { encrypt: true },
})

export default inertiaConfig
