import type { PluginRoutes } from '#core/plugins/define_plugin'

const AndroidDeviceController = () => import('./http/android_device_controller.js')
const AndroidGatewayController = () => import('./http/android_gateway_controller.js')
const WebPushKeyController = () => import('./http/web_push_key_controller.js')
const MailInController = () => import('./http/mail_in_controller.js')

/**
 * The device API of the SMS Gateway for Android app (private-server mode),
 * at the paths of the app's own server: the app is configured with
 * `<Quire's origin>/api/mobile/v1` and GATEWAYS_ANDROID_PRIVATE_TOKEN.
 */
const registerGatewayRoutes: PluginRoutes = (router) => {
  router
    .group(() => {
      router.post('/device', [AndroidDeviceController, 'register']).as('device.register')
      router.patch('/device', [AndroidDeviceController, 'update']).as('device.update')
      router.get('/message', [AndroidGatewayController, 'messages']).as('message.list')
      router.patch('/message', [AndroidGatewayController, 'updateStates']).as('message.states')
      router.get('/events', [AndroidGatewayController, 'events']).as('events')
      router.get('/webhooks', [AndroidGatewayController, 'webhooks']).as('webhooks')
    })
    .prefix('/api/mobile/v1')
    .as('gateways.android')

  // Where the app posts the webhooks GET /webhooks lists (README, "SMS Gateway for Android").
  router
    .post('/gateways/android/webhook/:deviceId', [AndroidGatewayController, 'webhook'])
    .as('gateways.android.webhook')

  // The VAPID public key browsers subscribe with (README, "Web Push").
  router
    .get('/gateways/push/vapid-public-key', [WebPushKeyController, 'show'])
    .as('gateways.push.vapid_public_key')

  // A relay's inbound webhook: the raw message as the body (README, "E-mail in").
  router.post('/gateways/mail/inbound', [MailInController, 'inbound']).as('gateways.mail.inbound')
}

export default registerGatewayRoutes
