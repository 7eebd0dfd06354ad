import { definePlugin } from '#core/plugins/define_plugin'

/** SMS gateways and push devices (see README.md). */
export default definePlugin({
  id: 'gateways',
  version: '0.2.0',
  description: 'SMS gateways and push devices',
  dependsOn: ['books', 'tables'],
  operations: {
    registerSMSGateway: () => import('./operations/register_s_m_s_gateway.js'),
    unregisterSMSGateway: () => import('./operations/unregister_s_m_s_gateway.js'),
    updatePushId: () => import('./operations/update_push_id.js'),
    getGatewayOutbox: () => import('./operations/get_gateway_outbox.js'),
    ackGatewayOutbox: () => import('./operations/ack_gateway_outbox.js'),
  },
  routes: () => import('./routes.js'),
  // SMS queued in one process wake the Android event streams held by the others.
  realtime: () => import('./services/android_realtime.js'),
  // Descriptions and examples for the API reference and MCP tools (docs/api-reference.md).
  reference: () => import('./reference.js'),
  provider: () => import('./provider.js'),
  // Console pages (/admin/gateways): admin/routes.ts, admin/pages/*.tsx.
  admin: {
    nav: [
      { label: 'SMS gateways', path: '/sms' },
      { label: 'Push devices', path: '/devices' },
      { label: 'Deliveries', path: '/deliveries' },
      { label: 'Inbound mail', path: '/mail' },
    ],
    routes: () => import('./admin/routes.js'),
  },
  // Read on every use through the settings service (docs/settings.md): a change applies at once.
  settings: [
    {
      key: 'smsMaxAttempts',
      label: 'Hand-outs of one SMS',
      help: 'Times one SMS is handed to a gateway phone in all; unconfirmed after the last, it is marked failed.',
      type: 'integer',
      default: 3,
      min: 1,
      max: 20,
      env: 'GATEWAYS_SMS_MAX_ATTEMPTS',
      runtime: true,
    },
  ],
})
