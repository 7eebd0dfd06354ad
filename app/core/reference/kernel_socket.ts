import type { ErrorCode } from '#core/rpc/errors'
import type { MessageDoc } from './types.js'

/**
 * The kernel's own socket frames (app/core/socket, docs/socket.md): attach and
 * ping, which no plugin registers, and the answers and signals every client
 * reads. Plugins' frames come from their manifests and `reference` files.
 */
const credentials = {
  o_u: "the caller's user code (or e-mail, phone)",
  u_c: 'the user acted for (default o_u)',
  sesskey: 'the session key',
}
const authErrors: ErrorCode[] = [
  'MISSING_PARAMETER',
  'INVALID_SESSKEY',
  'SESSION_EXPIRED',
  'USER_MISMATCH',
  'ON_BEHALF_DENIED',
  'UNKNOWN_USER',
]

export const KERNEL_CLIENT_MESSAGES: (MessageDoc & { key: string; type: number })[] = [
  {
    key: 'attach',
    type: 7,
    summary: 'Attach',
    description:
      'Attaches the connection to the user and session of its credentials (type 4 is accepted too, as real clients send it). Answered by one type 8 for the attached user, or an error frame.',
    fields: { ...credentials, version: "the client's version" },
    example: { type: 7, o_u: 'alice', u_c: 'alice', sesskey: 'S', version: '6.49' },
    errors: authErrors,
  },
  {
    key: 'attachLegacy',
    type: 4,
    summary: 'Attach (type 4)',
    description: 'Attach as real clients send it (the spec text says 4): the same as type 7.',
    fields: { ...credentials, version: "the client's version" },
    example: { type: 4, o_u: 'alice', sesskey: 'S' },
    errors: authErrors,
  },
  {
    key: 'ping',
    type: 9,
    summary: 'Ping',
    description: 'Answered by type 10.',
    fields: credentials,
    example: { type: 9, o_u: 'alice', sesskey: 'S' },
    errors: authErrors,
  },
]

export const KERNEL_SERVER_MESSAGES: (MessageDoc & { key: string; type: number })[] = [
  {
    key: 'ackMessage',
    type: 2,
    summary: 'Ack message',
    description:
      'Answers a send message (type 1) once the write committed; status nok with errorCode on a refusal.',
    fields: {
      status: 'ok or nok',
      uuid: "the client's uuid",
      smid: 'the message id',
      sstamp: 'stamp',
      created: 'creation time',
      del: 'deleted',
      b_o: 'book owner',
      b_c: 'book code',
    },
    example: {
      type: 2,
      status: 'ok',
      uuid: 'c1',
      smid: 43,
      sstamp: 812,
      created: 1764115200,
      del: false,
      b_o: 'alice',
      b_c: 'team',
    },
    errors: [],
  },
  {
    key: 'bookUpdates',
    type: 8,
    summary: 'Book updates ready',
    description:
      "One of the user's books changed (messages, book, members, table rows), coalesced per user: call getAllBooks with your sstamp. Also the answer to attach.",
    fields: { u_c: 'the recipient' },
    example: { type: 8, u_c: 'alice' },
    errors: [],
  },
  {
    key: 'ackPing',
    type: 10,
    summary: 'Ack ping',
    description: 'Answers a ping (type 9).',
    fields: { status: 'ok' },
    example: { type: 10, status: 'ok' },
    errors: [],
  },
  {
    key: 'ackSystemMessage',
    type: 12,
    summary: 'Ack system message',
    description:
      'Answers a system message (type 11) once its effect committed; status nok with errorCode on a refusal.',
    fields: {
      status: 'ok or nok',
      uuid: "the client's uuid",
      errorCode: 'on nok',
      errorMsg: 'on nok',
    },
    example: { type: 12, status: 'ok', uuid: 'c3' },
    errors: [],
  },
  {
    key: 'errorFrame',
    type: 0,
    summary: 'Error frame',
    description:
      'A refusal of a frame that has no ack type of its own (malformed, unknown type, attach, update table value, floods): the documented errorCode (docs/errors.md) and the refused type.',
    fields: {
      status: 'nok',
      errorCode: 'a code of docs/errors.md',
      errorMsg: 'text',
      reqType: 'the refused type',
      uuid: "the frame's uuid, when it had one",
    },
    example: {
      type: 0,
      status: 'nok',
      errorCode: 'UNKNOWN_MESSAGE_TYPE',
      errorMsg: 'Unknown message type 99',
      reqType: 99,
    },
    errors: [],
  },
]
