import type { PluginAdminRoutes } from '#core/plugins/define_plugin'

const WebhooksController = () => import('./controllers/webhooks_controller.js')

/** The webhooks plugin's console pages, mounted at /admin/webhooks (plugin.ts `admin`). */
const registerWebhooksConsole: PluginAdminRoutes = (router) => {
  router.get('/', [WebhooksController, 'index']).as('index')
  router.get('/:id', [WebhooksController, 'show']).as('show')
  router.post('/:id/active', [WebhooksController, 'setActive']).as('active')
  router.post('/:id/rotate', [WebhooksController, 'rotate']).as('rotate')
  router.post('/:id/redeliver', [WebhooksController, 'redeliver']).as('redeliver')
  router.post('/:id/test', [WebhooksController, 'test']).as('test')
  router.post('/:id/delete', [WebhooksController, 'destroy']).as('delete')
}

export default registerWebhooksConsole
