import { MAX_NESTING, acceptNested } from '#core/rpc/nesting'

/**
 * The socket protocol of docs/spec/service-interface.md part 6: JSON objects with an integer `type`.
 * docs/socket.md documents every message, error frame and close code.
 */
export const MessageType = {
  /** client -> server: send message; server -> client: receive message. */
  SEND_MESSAGE: 1,
  /** server -> client: ack of a send message. */
  ACK_MESSAGE: 2,
  /** client -> server: attach, as real clients send it (the spec's parameter text says 4). */
  ATTACH_LEGACY: 4,
  /** client -> server: attach user. */
  ATTACH: 7,
  /** server -> client: book updates ready (call getAllBooks with your sstamp). */
  BOOK_UPDATES: 8,
  PING: 9,
  ACK_PING: 10,
  /** client -> server: system message; server -> client: receive system message. */
  SYSTEM_MESSAGE: 11,
  ACK_SYSTEM: 12,
  /** client -> server: update table value. */
  UPDATE_TABLE_VALUE: 13,
  /**
   * server -> client: error frame, for frames that have no ack type of their
   * own (malformed, unknown type, attach, update table value, floods).
   */
  ERROR: 0,
} as const

/** The ack type answering a request type, when the spec defines one. */
export const ACK_OF: Record<number, number> = {
  [MessageType.SEND_MESSAGE]: MessageType.ACK_MESSAGE,
  [MessageType.PING]: MessageType.ACK_PING,
  [MessageType.SYSTEM_MESSAGE]: MessageType.ACK_SYSTEM,
}

/**
 * Close codes (RFC 6455 private range 4000-4999 for ours). Each close carries
 * a reason text as well.
 */
export const CloseCode = {
  /** Server shutting down (standard "going away"): reconnect elsewhere or later. */
  GOING_AWAY: 1001,
  /** A frame larger than SOCKET_MAX_FRAME_BYTES (standard "message too big"). */
  TOO_BIG: 1009,
  /** The session was dropped (dropAllSessions, revoke-others) or its sesskey is unknown. */
  SESSION_DROPPED: 4001,
  /** The session expired (idle lifetime): create a new sesskey. */
  SESSION_EXPIRED: 4002,
  /** No frame with valid credentials within SOCKET_ATTACH_TIMEOUT_MS. */
  ATTACH_TIMEOUT: 4003,
  /** Too many frames: the rate limit was exceeded beyond the tolerated count. */
  FLOOD: 4008,
  /** Too many malformed or refused frames. */
  BAD_FRAMES: 4009,
} as const

/**
 * A frame as received: a JSON object with an integer type. Its other fields
 * are read only through the handler's validator ('#core/rpc/wire' rules).
 */
export type Frame = Record<string, unknown> & { type: number }

/** An outgoing frame. */
export type OutFrame = Record<string, unknown> & { type: number }

export interface ErrorFields {
  errorCode: string
  errorMsg: string
}

/**
 * Parses one text frame. Answers the frame, or the reason it is malformed
 * (not JSON, not an object, no integer type).
 */
export function parseFrame(data: string): Frame | string {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return 'the frame is not valid JSON'
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'the frame is not a JSON object'
  if (!acceptNested(value)) return `the frame nests deeper than ${MAX_NESTING} levels`
  const raw = (value as Record<string, unknown>).type
  const type = typeof raw === 'string' && /^\d{1,4}$/.test(raw.trim()) ? Number(raw) : raw
  if (typeof type !== 'number' || !Number.isInteger(type)) return 'the frame has no integer type'
  return { ...(value as Record<string, unknown>), type }
}

/** The answer to a refused frame: its ack type with status nok when it has one, else an error frame. */
export function refusal(frame: Partial<Frame> | null, error: ErrorFields): OutFrame {
  const requestType = typeof frame?.type === 'number' ? frame.type : null
  const ackType = requestType === null ? undefined : ACK_OF[requestType]
  const answer: OutFrame = { type: ackType ?? MessageType.ERROR, status: 'nok', ...error }
  if (ackType === undefined && requestType !== null) answer.reqType = requestType
  // Clients match answers to requests by uuid (messages) or by cell (table values).
  for (const key of ['uuid', 'smid', 'msg', 'rowId', 'fieldId'] as const) {
    if (
      frame &&
      frame[key] !== undefined &&
      (key !== 'msg' || requestType === MessageType.SYSTEM_MESSAGE)
    ) {
      answer[key] = frame[key]
    }
  }
  return answer
}
