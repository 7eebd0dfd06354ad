import { defineReference } from '#core/reference/types'

const webhook =
  'the subscription {id, b_o, b_c, catId, url, events[], fieldIds[], description, active, ...}'

/**
 * The webhooks plugin's operations as the API reference and the MCP tools
 * show them (docs/api-reference.md). Kept true to README.md.
 */
export default defineReference({
  operations: {
    createWebhook: {
      summary: 'Subscribe a URL to table or book events',
      description:
        'A subscription of a table (`catId`) or a book (`b_c`) to `events`, optionally only some `fieldIds`; the signing secret is answered once.',
      returns: { webhook, secret: 'the signing secret (shown once)' },
      example: {
        b_o: 'alice',
        catId: 7,
        url: 'https://example.org/hook',
        events: 'row.created,row.updated',
      },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    deleteWebhook: {
      summary: 'Delete a subscription',
      description:
        'The subscription goes; its waiting deliveries are cancelled (the log stays until its retention).',
      returns: { webhookId: 'the deleted subscription' },
      example: { webhookId: 3 },
      errors: ['NOT_FOUND'],
    },
    getWebhookDeliveries: {
      summary: "A subscription's delivery log",
      description:
        'Deliveries newest first, each with its attempts; `page`, `nbMax`, `status` narrow it.',
      returns: { total: 'deliveries matching', deliveries: 'the page, newest first' },
      example: { webhookId: 3, nbMax: 20 },
      errors: ['NOT_FOUND'],
    },
    listWebhooks: {
      summary: "A table's or book's subscriptions",
      description: 'The subscriptions of a table (`catId`) or a book (`b_c`), without secrets.',
      returns: { webhooks: 'the subscriptions' },
      example: { b_o: 'alice', catId: 7 },
      errors: ['NOT_FOUND', 'FORBIDDEN'],
    },
    redeliverWebhook: {
      summary: 'Deliver again',
      description:
        'One delivery (`deliveryId`), or every failed one of a webhook since a time (`webhookId`, `since` in seconds).',
      returns: { deliveryIds: 'the deliveries queued again' },
      example: { deliveryId: 55 },
      errors: ['NOT_FOUND'],
    },
    rotateWebhookSecret: {
      summary: 'A new signing secret',
      description: 'A new secret, answered once; the old one also signs for 24 hours.',
      returns: { webhook, secret: 'the new secret (shown once)' },
      example: { webhookId: 3 },
      errors: ['NOT_FOUND'],
    },
    testWebhook: {
      summary: 'Send a test event',
      description: 'Sends a `webhook.test` event now (one attempt) and answers its delivery id.',
      returns: { deliveryId: 'the test delivery', idempotencyKey: 'its idempotency key' },
      example: { webhookId: 3 },
      errors: ['NOT_FOUND', 'CONFLICT'],
    },
    updateWebhook: {
      summary: 'Change a subscription',
      description: 'url, events, fieldIds, description, active (1 enables a disabled one again).',
      returns: { webhook },
      example: { webhookId: 3, active: 1 },
      errors: ['NOT_FOUND'],
    },
  },
})
