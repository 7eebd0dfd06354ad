import type { PluginAdminRoutes } from '#core/plugins/define_plugin'

const GatewaysController = () => import('./controllers/gateways_controller.js')

/** The gateways plugin's console pages, mounted at /admin/gateways (plugin.ts `admin`). */
const registerGatewaysConsole: PluginAdminRoutes = (router) => {
  router.get('/', ({ response }) => response.redirect('/admin/gateways/sms')).as('home')
  router.get('/sms', [GatewaysController, 'index']).as('index')
  router.post('/sms/allow', [GatewaysController, 'allow']).as('allow')
  router.get('/sms/:id', [GatewaysController, 'show']).as('show')
  router.post('/sms/:id/unregister', [GatewaysController, 'unregister']).as('unregister')
  router.get('/devices', [GatewaysController, 'devicesIndex']).as('devices')
  router.post('/devices/:id/deactivate', [GatewaysController, 'deactivate']).as('deactivate')
  router.get('/deliveries', [GatewaysController, 'deliveriesIndex']).as('deliveries')
  router.get('/deliveries/:id', [GatewaysController, 'delivery']).as('delivery')
  router.post('/deliveries/:id/retry', [GatewaysController, 'retry']).as('retry')
  router.get('/mail', [GatewaysController, 'mail']).as('mail')
}

export default registerGatewaysConsole
