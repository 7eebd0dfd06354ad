import { defineConfig } from '@adonisjs/inertia'

/** The admin console's Inertia settings (resources/admin, rendered into resources/views/inertia_layout.edge). */
const inertiaConfig = defineConfig({
  rootView: 'inertia_layout',
  entrypoint: 'resources/admin/app.tsx',
  sharedData: {},
  ssr: { enabled: false },
})

export default inertiaConfig
