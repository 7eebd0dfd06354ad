import { createInertiaApp } from '@inertiajs/react'
import { createRoot } from 'react-dom/client'
import type { ReactNode } from 'react'
import Layout from './components/layout'
import './styles.css'
// Linked from the root template (resources/views/inertia_layout.edge) through Vite's manifest:
// importing it here is what puts it in the build.
import './favicon.svg'

type PageModule = { default: { layout?: unknown } & ((props: any) => ReactNode) }

/** The console's own pages, and the pages enabled plugins contribute (plugins/<id>/admin/pages). */
const own = import.meta.glob<PageModule>('./pages/**/*.tsx')
const contributed = import.meta.glob<PageModule>('../../plugins/*/admin/pages/**/*.tsx')

/** `users/index` is a console page; `books/index` is plugins/books/admin/pages/index.tsx. */
async function resolvePage(name: string): Promise<PageModule> {
  const page = own[`./pages/${name}.tsx`]
  if (page) return page()
  const [plugin, ...rest] = name.split('/')
  const fromPlugin = contributed[`../../plugins/${plugin}/admin/pages/${rest.join('/')}.tsx`]
  if (fromPlugin) return fromPlugin()
  throw new Error(`No console page named ${name}`)
}

const BARE = new Set(['login'])

createInertiaApp({
  title: (title) => (title ? `${title} · Quire console` : 'Quire console'),
  resolve: async (name) => {
    const module = await resolvePage(name)
    if (!BARE.has(name) && module.default.layout === undefined)
      module.default.layout = (page: ReactNode) => <Layout>{page}</Layout>
    return module
  },
  setup({ el, App, props }) {
    createRoot(el).render(<App {...props} />)
  },
  progress: { color: '#3b6fd8' },
})
