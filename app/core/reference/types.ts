import type { ErrorCode } from '#core/rpc/errors'

/**
 * What a plugin writes about its own operations and socket messages (its
 * `reference.ts`, declared by the manifest's `reference`). Everything else the
 * reference shows (parameters, types, limits, auth mode, restrictions area,
 * writes, files) is read from the operation classes and their VineJS schemas:
 * nothing is written twice. tests/unit/reference/reference_documents.spec.ts fails when a
 * registered operation or socket message has no entry here.
 */
export interface OperationDoc {
  /** One line, shown as the operation's title. */
  summary: string
  /** A few sentences: what it does, what it answers (true to the plugin's README). */
  description: string
  /** The top-level fields of the `ok` answer besides the envelope, each with a short meaning. */
  returns: Record<string, string>
  /** One example call: its parameters besides req and the credentials. */
  example: Record<string, unknown>
  /**
   * The nok codes the operation itself answers. Those of its auth mode,
   * validation, writes and restrictions area are added by the generator.
   */
  errors: ErrorCode[]
}

/** A socket message (client to server or server to client). */
export interface MessageDoc {
  summary: string
  description: string
  /** One example frame, as sent on the wire. */
  example: Record<string, unknown>
  /** The refusals (error or nok ack codes) it may answer; empty for server-to-client messages. */
  errors: ErrorCode[]
  /** Server-to-client messages have no validator: their fields, each with a short meaning. */
  fields?: Record<string, string>
}

/** An OpenAPI 3.1 path item, kept as plain data (the HTTP routes a plugin registered). */
export type PathItem = Record<string, unknown>

export interface PluginReference {
  /** api.php operations, keyed by wire name (every registered operation must have one). */
  operations?: Record<string, OperationDoc>
  /** Client-to-server socket types the plugin handles, keyed by type. */
  socket?: Record<number, MessageDoc>
  /**
   * Client-to-server frames served outside the registry's socket map (an SMS
   * gateway's socket, through the kernel's GatewayAuth): described by `fields`.
   */
  gatewayMessages?: Record<number, MessageDoc>
  /** Type 11 system messages the plugin handles, keyed by `msg`. */
  systemMessages?: Record<string, MessageDoc>
  /** Server-to-client frames the plugin sends, keyed by a name unique in the document. */
  serverMessages?: Record<string, MessageDoc & { type: number }>
  /** HTTP routes outside api.php (the /dbi family, tus, the auth service), keyed by path. */
  paths?: Record<string, PathItem>
}

export function defineReference<const T extends PluginReference>(reference: T): T {
  return reference
}
