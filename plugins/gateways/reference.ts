import { defineReference } from '#core/reference/types'

const outbox = {
  ackSeconds: 'seconds to acknowledge before the lease lapses',
  sms: '[{id, to, msg, kind, attempt}]',
}

/**
 * The gateways plugin's operations and gateway socket frames as the API
 * reference and the MCP tools show them (docs/api-reference.md). Kept true to
 * README.md ("SMS gateways", "Outbound SMS").
 */
export default defineReference({
  operations: {
    registerSMSGateway: {
      summary: 'Register an SMS gateway (a phone)',
      description:
        'A sesskey (prefix `gw-`) bound to the gateway whose number is `o_u`, once an administrator allowed that number (`node ace gateway:allow`); a number not allowed is recorded as pending. Optional `b_o` + `b_c`: the book its messages go to.',
      returns: { sesskey: "the gateway's sesskey (gw-...)" },
      example: { o_u: '+33612345678', appname: 'SMS relay' },
      errors: ['GATEWAY_PENDING', 'INVALID_PARAMETER', 'NOT_FOUND', 'RATE_LIMITED'],
    },
    unregisterSMSGateway: {
      summary: "End a gateway's session",
      description:
        "The gateway's sesskey stops working (INVALID_SESSKEY) and its sockets are closed with 4001.",
      returns: {},
      example: {},
      errors: ['INVALID_SESSKEY', 'USER_MISMATCH', 'RATE_LIMITED'],
    },
    updatePushId: {
      summary: 'Register a push device',
      description:
        "Registers or updates the caller's push device (`deviceType`, `registrationID`, `projectID`, `active`) and answers its deviceID.",
      returns: { deviceID: 'the device id (a number)' },
      example: { deviceType: 'gcm_rid', registrationID: 'fcm-token', active: 'TRUE' },
      errors: ['NOT_FOUND'],
    },
    getGatewayOutbox: {
      summary: 'Collect the SMS to send',
      description:
        'The SMS the calling gateway is to send, oldest first, at most `limit` (1–100, default 20), leased to it until it acknowledges them (ackGatewayOutbox) or the lease lapses.',
      returns: outbox,
      example: { limit: 20 },
      errors: ['INVALID_SESSKEY', 'USER_MISMATCH', 'RATE_LIMITED'],
    },
    ackGatewayOutbox: {
      summary: 'Report SMS sent, delivered or failed',
      description:
        'Reports SMS the gateway collected (`ids`, 1 to 500) as `sent`, `delivered` or `failed` (with a `reason`). States only move forward. Every id must be one of its SMS, else NOT_FOUND and nothing is written.',
      returns: { updated: 'the number of SMS whose state changed' },
      example: { ids: [42], state: 'sent' },
      errors: ['NOT_FOUND', 'INVALID_SESSKEY', 'USER_MISMATCH', 'RATE_LIMITED'],
    },
  },
  serverMessages: {
    gatewayOutbox: {
      type: 40,
      summary: 'Outbox frame (SMS gateways)',
      description:
        "Sent to an SMS gateway's socket on attach (possibly empty) and whenever SMS are due for it: getGatewayOutbox's answer, leased the same way.",
      fields: outbox,
      example: {
        type: 40,
        ackSeconds: 600,
        sms: [{ id: 42, to: '+33612345678', msg: 'Team: Ann: hello', kind: 'copy', attempt: 1 }],
      },
      errors: [],
    },
    gatewayReportAck: {
      type: 42,
      summary: "Ack of a gateway's report",
      description: 'Answers a type 41 report once written.',
      fields: { status: 'ok', updated: 'SMS whose state changed', uuid: "the report's uuid" },
      example: { type: 42, status: 'ok', updated: 1, uuid: 'r1' },
      errors: [],
    },
  },
  gatewayMessages: {
    41: {
      summary: 'Report SMS (SMS gateways)',
      description:
        "ackGatewayOutbox's parameters with its rules, from a gateway's socket; answered by type 42, or an error frame (type 0, reqType 41) with nothing written.",
      fields: {
        o_u: "the gateway's number",
        sesskey: "the gateway's sesskey",
        ids: 'SMS ids',
        state: 'sent, delivered or failed',
        reason: 'for failures',
        uuid: 'echoed in the answer',
      },
      example: {
        type: 41,
        o_u: '+33612345678',
        sesskey: 'gw-…',
        ids: [42],
        state: 'sent',
        uuid: 'r1',
      },
      errors: [
        'NOT_FOUND',
        'INVALID_PARAMETER',
        'MISSING_PARAMETER',
        'USER_MISMATCH',
        'INVALID_SESSKEY',
        'RATE_LIMITED',
      ],
    },
  },
})
