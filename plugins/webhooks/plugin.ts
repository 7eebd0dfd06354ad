import { definePlugin } from '#core/plugins/define_plugin'

/** Webhooks: signed deliveries of table and book events through the kernel outbox (see README.md). */
export default definePlugin({
  id: 'webhooks',
  version: '0.2.0',
  description: 'Webhooks (Standard Webhooks signatures) for table rows, comments and messages',
  dependsOn: ['books', 'tables'],
  operations: {
    createWebhook: () => import('./operations/create_webhook.js'),
    deleteWebhook: () => import('./operations/delete_webhook.js'),
    getWebhookDeliveries: () => import('./operations/get_webhook_deliveries.js'),
    listWebhooks: () => import('./operations/list_webhooks.js'),
    redeliverWebhook: () => import('./operations/redeliver_webhook.js'),
    rotateWebhookSecret: () => import('./operations/rotate_webhook_secret.js'),
    testWebhook: () => import('./operations/test_webhook.js'),
    updateWebhook: () => import('./operations/update_webhook.js'),
  },
  // Registers the `webhook` outbox channel and its part in the in-transaction topics.
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  provider: () => import('./provider.js'),
  // Console pages (/admin/webhooks): admin/routes.ts, admin/pages/*.tsx.
  admin: {
    nav: [{ label: 'Webhooks' }],
    routes: () => import('./admin/routes.js'),
  },
  // Read through the settings service on every delivery (config.ts): a change applies at once.
  settings: [
    {
      key: 'timeoutMs',
      label: 'Delivery timeout',
      help: 'How long one delivery attempt may take, from connecting to the end of the answer, in milliseconds.',
      type: 'integer',
      default: 10_000,
      min: 100,
      max: 3_600_000,
      env: 'WEBHOOKS_TIMEOUT_MS',
      runtime: true,
    },
    {
      key: 'disableAfterFailures',
      label: 'Failures before a webhook is turned off',
      help: 'Deliveries that failed for good, in a row, before the subscription is disabled.',
      type: 'integer',
      default: 3,
      min: 1,
      max: 1000,
      env: 'WEBHOOKS_DISABLE_AFTER_FAILURES',
      runtime: true,
    },
  ],
})
