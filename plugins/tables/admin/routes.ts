import type { PluginAdminRoutes } from '#core/plugins/define_plugin'

const TablesController = () => import('./controllers/tables_controller.js')

/** The tables plugin's console pages, mounted at /admin/tables (plugin.ts `admin`). */
const registerTablesConsole: PluginAdminRoutes = (router) => {
  router.get('/', [TablesController, 'index']).as('index')
  router.get('/:catId', [TablesController, 'show']).as('show')
  router.post('/:catId/cells', [TablesController, 'updateCell']).as('cell')
  router.get('/:catId/export.csv', [TablesController, 'exportCsv']).as('export')
}

export default registerTablesConsole
