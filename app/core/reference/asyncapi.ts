import type { Catalogue, SocketEntry } from './catalogue.js'
import { KERNEL_CLIENT_MESSAGES, KERNEL_SERVER_MESSAGES } from './kernel_socket.js'
import type { MessageDoc } from './types.js'
import type { DocumentLabel } from './openapi.js'
import type { JsonSchema } from './vine_json_schema.js'

const CREDENTIALS: Record<string, JsonSchema> = {
  o_u: { type: 'string', description: "the caller's user code (or e-mail, phone)" },
  u_c: { type: 'string', description: 'the user acted for (default o_u)' },
  sesskey: { type: 'string', description: 'the session key' },
}

/** A payload schema from a doc's `fields` (frames no validator reads: server-to-client ones). */
function fieldsSchema(type: number, fields: Record<string, string> = {}): JsonSchema {
  return {
    type: 'object',
    required: ['type'],
    properties: {
      type: { const: type },
      ...Object.fromEntries(
        Object.entries(fields).map(([key, text]) => [key, { description: text }])
      ),
    },
  }
}

/** A client frame's payload: its type (and msg), the credentials, then its validator's fields. */
function clientSchema(entry: SocketEntry): JsonSchema {
  const properties: Record<string, JsonSchema> = { type: { const: entry.type }, ...CREDENTIALS }
  const required = ['type', 'o_u', 'sesskey']
  if (entry.msg) {
    properties.msg = { const: entry.msg }
    properties.uuid = { type: 'string', description: 'echoed by the type 12 ack' }
    required.push('msg')
  }
  Object.assign(properties, entry.params.properties ?? {})
  required.push(...(entry.params.required ?? []))
  return { type: 'object', required: [...new Set(required)], properties }
}

function message(
  name: string,
  doc: MessageDoc | undefined,
  payload: JsonSchema,
  extra: Record<string, unknown> = {}
) {
  const errors = (extra['x-quire-errors'] as string[] | undefined) ?? []
  return {
    name,
    title: doc?.summary ?? name,
    summary: doc?.summary ?? name,
    description:
      (doc?.description ?? '') +
      (errors.length ? `\n\nRefusals: ${errors.map((code) => `\`${code}\``).join(', ')}.` : ''),
    contentType: 'application/json',
    payload,
    examples: doc?.example ? [{ name: 'example', payload: doc.example }] : [],
    ...extra,
  }
}

/**
 * The AsyncAPI 3.0 document of the socket (docs/socket.md): one channel, the
 * WebSocket at <prefix>/socket, with every frame as a message. Operations are
 * from the server's point of view: it `receive`s client frames and `send`s its
 * own. Client frames' payloads come from the handlers' VineJS validators.
 */
export function buildAsyncApi(catalogue: Catalogue, label: DocumentLabel, host: string) {
  const messages: Record<string, unknown> = {}
  const received: string[] = []
  const sent: string[] = []

  for (const doc of KERNEL_CLIENT_MESSAGES) {
    messages[doc.key] = message(
      doc.key,
      doc,
      { ...fieldsSchema(doc.type, doc.fields), required: ['type', 'o_u', 'sesskey'] },
      {
        'x-quire-type': doc.type,
        'x-quire-errors': doc.errors,
      }
    )
    received.push(doc.key)
  }
  for (const entry of [...catalogue.socket].sort((a, b) => a.key.localeCompare(b.key))) {
    messages[entry.key] = message(entry.key, entry.doc, clientSchema(entry), {
      'x-quire-type': entry.type,
      'x-quire-plugin': entry.pluginId,
      'x-quire-writes': entry.writes,
      'x-quire-area': entry.area ?? null,
      'x-quire-errors': entry.errors,
    })
    received.push(entry.key)
  }
  for (const doc of catalogue.gatewayMessages) {
    messages[doc.key] = message(doc.key, doc, fieldsSchema(doc.type, doc.fields), {
      'x-quire-type': doc.type,
      'x-quire-plugin': doc.pluginId,
      'x-quire-errors': doc.errors,
    })
    received.push(doc.key)
  }
  for (const doc of [...KERNEL_SERVER_MESSAGES, ...catalogue.serverMessages]) {
    messages[doc.key] = message(doc.key, doc, fieldsSchema(doc.type, doc.fields), {
      'x-quire-type': doc.type,
    })
    sent.push(doc.key)
  }

  const channelMessages = Object.fromEntries(
    Object.keys(messages).map((key) => [key, { $ref: `#/components/messages/${key}` }])
  )
  const operations: Record<string, unknown> = {}
  for (const key of received) {
    operations[`receive_${key}`] = {
      action: 'receive',
      channel: { $ref: '#/channels/socket' },
      summary: `Client to server: ${(messages[key] as { title: string }).title}`,
      messages: [{ $ref: `#/channels/socket/messages/${key}` }],
    }
  }
  for (const key of sent) {
    operations[`send_${key}`] = {
      action: 'send',
      channel: { $ref: '#/channels/socket' },
      summary: `Server to client: ${(messages[key] as { title: string }).title}`,
      messages: [{ $ref: `#/channels/socket/messages/${key}` }],
    }
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Quire socket',
      version: label.apiVersion,
      description: `The socket messages of the interface's part 6 (docs/socket.md), generated from the socket handlers registered by this server's plugins and their VineJS schemas. Every frame is a JSON object with an integer \`type\`; every client frame carries o_u, sesskey (and u_c). Operations are written from the server's side: it receives client frames and sends its own.`,
    },
    defaultContentType: 'application/json',
    servers: {
      quire: {
        host,
        protocol: 'ws',
        pathname: `${label.prefix}/socket`,
        description:
          'The WebSocket, on the HTTP server and port of api.php (wss behind a TLS front).',
      },
    },
    channels: {
      socket: {
        address: `${label.prefix}/socket`,
        title: 'The socket',
        servers: [{ $ref: '#/servers/quire' }],
        messages: channelMessages,
      },
    },
    operations,
    components: { messages },
  }
}
