import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { GatewayAuth } from '#core/auth/gateway_auth'
import gatewaysConfig from './config.js'
import { AndroidDeviceService } from './services/android_device_service.js'
import { GatewayLimits } from './services/gateway_limits.js'
import { PushDeviceService } from './services/push_device_service.js'
import { SmsGatewayService } from './services/sms_gateway_service.js'

/** The gateways services, container singletons bound by class. */
export default class GatewaysProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(
      GatewayLimits,
      async (resolver) => new GatewayLimits(await resolver.make('limiter.manager'), gatewaysConfig)
    )
    bindSingletons(this.app.container, [SmsGatewayService, PushDeviceService, AndroidDeviceService])
  }

  /** The kernel routes gateways' sesskeys to this plugin (sendMsg, unregisterSMSGateway). */
  async boot() {
    const gateways = await this.app.container.make(GatewayAuth)
    gateways.use(() => this.app.container.make(SmsGatewayService))
  }
}
