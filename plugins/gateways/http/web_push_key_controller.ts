import type { HttpContext } from '@adonisjs/core/http'
import gatewaysConfig from '../config.js'

/**
 * The VAPID public key a browser subscribes with
 * (`pushManager.subscribe({ applicationServerKey })`). Public by nature:
 * no session; 404 while Web Push is not configured here.
 */
export default class WebPushKeyController {
  show({ response }: HttpContext) {
    const { publicKey, privateKey, subject } = gatewaysConfig.webPush
    if (!publicKey || !privateKey || !subject)
      return response.status(404).json({ message: 'Web Push is not configured on this server' })
    response.header('cache-control', 'public, max-age=3600')
    return response.json({ publicKey })
  }
}
