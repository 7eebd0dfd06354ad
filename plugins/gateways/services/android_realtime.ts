import { inject } from '@adonisjs/core'
import app from '@adonisjs/core/services/app'
import type { SocketHub } from '#core/socket/hub'
import type { Realtime } from '#core/socket/socket_handler'
import { AndroidGatewayService } from './android_gateway_service.js'
import { SmsOutboxService } from './sms_outbox_service.js'

/** The hub signal that tells the other instances a gateway has SMS waiting (its id, or null: any). */
export const SMS_ENQUEUED_SIGNAL = 'gateways:sms_enqueued'

/**
 * SMS are queued by whichever process wrote the change (a web instance, a
 * `queue:work` process running reminders); the phone's event stream may be
 * held by another instance. The hub's channel (Redis) carries the wake-up
 * to every instance, whose streams of that gateway then send MessageEnqueued.
 * Each serving instance also sweeps lapsed leases and SMS fallen due
 * (SmsOutboxService.startSweeping), and ends its event streams at shutdown.
 */
@inject()
export default class AndroidRealtime implements Realtime {
  constructor(
    private outbox: SmsOutboxService,
    private androidGateways: AndroidGatewayService
  ) {}

  bind(hub: SocketHub) {
    this.outbox.relayTo((gatewayId) => hub.signal(SMS_ENQUEUED_SIGNAL, gatewayId))
    hub.onSignal<unknown>(SMS_ENQUEUED_SIGNAL, (gatewayId) => {
      if (gatewayId === null || typeof gatewayId === 'number') this.outbox.wake(gatewayId)
    })
    // Serving processes sweep; a queue worker or a command only relays what it queues.
    if (app.getEnvironment() === 'console') return
    this.outbox.startSweeping()
    // Runs before the front door's close (terminating hooks run last-added first).
    app.terminating(() => this.androidGateways.closeStreams())
  }
}
