import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { OutboxService } from '#core/outbox/outbox_service'
import { triggerUrlHook, urlTriggerDefaults } from '#plugins/tables/lib/trigger_url_hook'
import webhooksConfig from './config.js'
import { DeliveryLog } from './services/delivery_log.js'
import { commentsContributor, messagesContributor, rowsContributor } from './services/payloads.js'
import { SubscriptionIndex } from './services/subscription_index.js'
import { WebhookChannel } from './services/webhook_channel.js'
import { WebhookService, CHANNEL } from './services/webhook_service.js'

/**
 * The webhooks services as singletons; at boot, the `webhook` channel and
 * the plugin's contributions to the outbox's in-transaction topics (so that
 * every process, web or `queue:work`, can stage and send deliveries).
 */
export default class WebhooksProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton(SubscriptionIndex, () => new SubscriptionIndex())
    bindSingletons(this.app.container, [WebhookService, DeliveryLog])
  }

  async boot() {
    const outbox = await this.app.container.make(OutboxService)
    const index = await this.app.container.make(SubscriptionIndex)
    const webhooks = await this.app.container.make(WebhookService)
    outbox.registerChannel(CHANNEL, new WebhookChannel(webhooks))
    outbox.contribute('tables:rows_changed', rowsContributor(index))
    outbox.contribute('tables:comment_created', commentsContributor(index))
    outbox.contribute('books:message_changed', messagesContributor(index))
    // updateTable's triggerUpdateUrl: the table's row webhook for that URL.
    triggerUrlHook.install((actor, catId, url) => webhooks.setTriggerUrl(actor, catId, url))
    // api.php's bypassUrlTrigger default (WEBHOOKS_API_DEFAULT_BYPASS).
    urlTriggerDefaults.apiBypass = webhooksConfig.apiDefaultBypass
  }
}
