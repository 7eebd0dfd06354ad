import type { PluginRoutes } from '#core/plugins/define_plugin'

const AndroidDeviceController = () => import('./http/android_device_controller.js')
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
    })
    .prefix('/api/mobile/v1')
    .as('gateways.android')

  // The VAPID public key browsers subscribe with (README, "Web Push").
  router
    .get('/gateways/push/vapid-public-key', [WebPushKeyController, 'show'])
    .as('gateways.push.vapid_public_key')

  // A relay's inbound webhook: the raw message as the body (README, "E-mail in").
  router.post('/gateways/mail/inbound', [MailInController, 'inbound']).as('gateways.mail.inbound')
}

export default registerGatewayRoutes
