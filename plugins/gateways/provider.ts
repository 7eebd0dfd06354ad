import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { GatewayAuth } from '#core/auth/gateway_auth'
import { OutboxService } from '#core/outbox/outbox_service'
import gatewaysConfig from './config.js'
import { AndroidDeviceService } from './services/android_device_service.js'
import { AndroidGatewayService } from './services/android_gateway_service.js'
import { GatewayLimits } from './services/gateway_limits.js'
import { CopyService } from './services/copies/copy_service.js'
import { AddressInvitationLinks } from './services/invitations/address_invitation_links.js'
import { MAIL_CHANNEL, MailOutService } from './services/mail_out/mail_out_service.js'
import {
  ALARM_CHANNEL,
  REMINDER_CHANNEL,
  ReminderService,
} from './services/reminders/reminder_service.js'
import { MailInSetup } from './services/mail_in/mail_in_setup.js'
import { PushDeviceService } from './services/push_device_service.js'
import { PushDeliveryService } from './services/push/push_delivery_service.js'
import { PushEventNotifications } from './services/push/push_event_notifications.js'
import { CHANNEL_OF } from './services/push/push_providers.js'
import { SmsGatewayService } from './services/sms_gateway_service.js'
import { SmsOutboxService } from './services/sms_outbox_service.js'

/** The gateways services, container singletons bound by class. */
export default class GatewaysProvider {
  private mailIn: MailInSetup

  constructor(protected app: ApplicationService) {
    this.mailIn = new MailInSetup(app)
  }

  register() {
    this.mailIn.register()
    this.app.container.singleton(
      GatewayLimits,
      async (resolver) => new GatewayLimits(await resolver.make('limiter.manager'), gatewaysConfig)
    )
    this.app.container.singleton(PushDeliveryService, () => new PushDeliveryService())
    this.app.container.singleton(MailOutService, () => new MailOutService())
    bindSingletons(this.app.container, [
      SmsGatewayService,
      SmsOutboxService,
      PushDeviceService,
      AndroidDeviceService,
      AndroidGatewayService,
    ])
  }

  /**
   * The kernel routes gateways' sesskeys to this plugin (sendMsg,
   * unregisterSMSGateway); push deliveries are staged with every new message
   * (books' in-transaction topic) and sent by the push outbox channels, in
   * every process (web or `queue:work`).
   */
  async boot() {
    const gateways = await this.app.container.make(GatewayAuth)
    gateways.use(() => this.app.container.make(SmsGatewayService))
    const outbox = await this.app.container.make(OutboxService)
    const push = await this.app.container.make(PushDeliveryService)
    outbox.registerChannel(CHANNEL_OF.fcm, push.channel('fcm'))
    outbox.registerChannel(CHANNEL_OF.apns, push.channel('apns'))
    outbox.registerChannel(CHANNEL_OF.webpush, push.channel('webpush'))
    outbox.contribute('books:message_changed', push.messageContributor())
    const pushEvents = new PushEventNotifications(push)
    outbox.contribute('books:member_invited', pushEvents.invitationContributor())
    outbox.contribute('tables:comment_created', pushEvents.commentContributor())
    const mailOut = await this.app.container.make(MailOutService)
    outbox.registerChannel(MAIL_CHANNEL, mailOut.channel())
    const copies = await this.app.container.make(CopyService)
    outbox.contribute('books:message_changed', copies.messageContributor())
    const invitationLinks = await this.app.container.make(AddressInvitationLinks)
    outbox.contribute('books:address_invited', invitationLinks.contributor())
    const reminders = await this.app.container.make(ReminderService)
    outbox.registerChannel(REMINDER_CHANNEL, reminders.reminderChannel())
    outbox.registerChannel(ALARM_CHANNEL, reminders.alarmChannel())
    outbox.contribute('books:message_changed', reminders.messageContributor())
  }

  /** The inbound SMTP listener, when GATEWAYS_SMTP_LISTEN_PORT is set (web server only). */
  async ready() {
    await this.mailIn.start()
  }

  /** The SMTP connection, if one is open; the inbound listener. */
  async shutdown() {
    await this.mailIn.stop()
    const mailOut = await this.app.container.make(MailOutService)
    await mailOut.close()
  }
}
