/**
 * Scalar renders OpenAPI only: the AsyncAPI document is shown through an
 * OpenAPI 3.1 view of it, made here in the browser from /live/asyncapi.json
 * itself (nothing written twice): each socket message becomes a `webhooks`
 * entry with its payload schema, example, direction and refusals.
 */
type Json = Record<string, any>

export function socketView(asyncapi: Json): Json {
  const messages: Json = asyncapi.components?.messages ?? {}
  const direction = new Map<string, string>()
  for (const operation of Object.values<Json>(asyncapi.operations ?? {})) {
    for (const ref of operation.messages ?? []) {
      const key =
        String(ref.$ref ?? '')
          .split('/')
          .pop() ?? ''
      direction.set(key, operation.action === 'receive' ? 'client → server' : 'server → client')
    }
  }
  const webhooks: Json = {}
  for (const [key, message] of Object.entries<Json>(messages)) {
    const way = direction.get(key) ?? 'socket'
    const type = message['x-quire-type']
    webhooks[`${way} · type ${type} · ${message.title}`] = {
      post: {
        operationId: `socket_${key}`,
        tags: [way],
        summary: `type ${type}: ${message.title}`,
        description: message.description,
        requestBody: {
          description: 'The frame, a JSON text message on the WebSocket',
          content: {
            'application/json': {
              schema: message.payload,
              ...(message.examples?.[0] ? { example: message.examples[0].payload } : {}),
            },
          },
        },
        responses: {
          '200': { description: 'No HTTP answer: see the message for its answer frame' },
        },
      },
    }
  }
  const server = asyncapi.servers?.quire ?? {}
  return {
    openapi: '3.1.0',
    info: {
      title: `${asyncapi.info?.title ?? 'Socket'} (AsyncAPI ${asyncapi.asyncapi})`,
      version: asyncapi.info?.version ?? '',
      description: `${asyncapi.info?.description ?? ''}\n\nConnect to \`${server.protocol ?? 'ws'}://${server.host ?? ''}${server.pathname ?? ''}\`. The source document: [asyncapi.json](${server.pathname?.replace(/\/socket$/, '') ?? '/live'}/asyncapi.json).`,
    },
    tags: [{ name: 'client → server' }, { name: 'server → client' }],
    webhooks,
  }
}
