import { ERROR_CATALOGUE } from '#core/rpc/errors'
import type { Catalogue, OperationEntry } from './catalogue.js'
import type { JsonSchema } from './vine_json_schema.js'

export interface DocumentLabel {
  /** The environment prefix the document describes (/live). */
  prefix: string
  apiVersion: string
  createdVNB: string
}

const AUTH_TEXT: Record<string, string> = {
  none: 'none (no session)',
  session: 'a session: o_u + sesskey (u_c optional, defaults to o_u)',
  session_or_public_table: 'a session, or nothing when the table is public',
  gateway: "an SMS gateway's sesskey (gw-...) with its number as o_u",
  session_or_gateway: "a session, or an SMS gateway's sesskey acting for the sender u_c names",
}

/** The credentials the request body takes, by auth mode. */
function credentials(auth: string): { properties: Record<string, JsonSchema>; required: string[] } {
  if (auth === 'none') return { properties: {}, required: [] }
  const properties: Record<string, JsonSchema> = {
    o_u: {
      type: 'string',
      description: "the caller's user code (or e-mail, phone; a gateway's number)",
    },
    sesskey: { type: 'string', description: 'the session key (createSesskey)' },
  }
  if (auth !== 'gateway') {
    properties.u_c = { type: 'string', description: 'the user acted for (default o_u)' }
  }
  const required = auth === 'session_or_public_table' ? [] : ['o_u', 'sesskey']
  return { properties, required }
}

/** The request body schema of one operation: req, credentials, its parameters. */
export function requestSchema(entry: OperationEntry): JsonSchema {
  const creds = credentials(entry.Operation.auth)
  const params = entry.params
  const properties = {
    req: { type: 'string', const: entry.name, description: 'the operation (also accepted as r)' },
    ...creds.properties,
    ...(params.properties ?? {}),
  }
  const schema: JsonSchema = {
    type: 'object',
    properties,
    required: [...new Set(['req', ...creds.required, ...(params.required ?? [])])],
  }
  if (params.additionalProperties) schema.additionalProperties = true
  return schema
}

function exampleOf(entry: OperationEntry) {
  const creds =
    entry.Operation.auth === 'none'
      ? {}
      : entry.Operation.auth === 'gateway'
        ? { o_u: '+33612345678', sesskey: 'gw-…' }
        : { o_u: 'alice', sesskey: 'S3SSK3Y' }
  // Nested values travel as JSON text in a form body.
  const params = Object.fromEntries(
    Object.entries(entry.doc?.example ?? {}).map(([key, value]) => [
      key,
      value !== null && typeof value === 'object' ? JSON.stringify(value) : value,
    ])
  )
  return { req: entry.name, ...creds, ...params }
}

function operationObject(entry: OperationEntry, label: DocumentLabel) {
  const { Operation, doc } = entry
  const facts = [
    `**Auth:** ${AUTH_TEXT[Operation.auth] ?? Operation.auth}.`,
    Operation.area
      ? `**Restrictions area:** ${Operation.area} (refused to sessions hiding it).`
      : '',
    Operation.writes ? '**Writes:** refused to read-only sessions.' : '**Reads only.**',
    Operation.files
      ? `**Files:** multipart part \`qqfile\`, at most ${Operation.files.maxBytes} bytes in all.`
      : '',
    `**Nok codes:** ${entry.errors.map((code) => `\`${code}\``).join(', ')}.`,
  ].filter(Boolean)
  const schema = requestSchema(entry)
  const example = exampleOf(entry)
  const content: Record<string, unknown> = {
    'application/x-www-form-urlencoded': {
      schema,
      // `examples` rather than `example`: Scalar fills its request samples from it.
      examples: { call: { summary: doc?.summary ?? entry.name, value: example } },
    },
  }
  if (Operation.files) {
    content['multipart/form-data'] = {
      schema: {
        ...schema,
        properties: {
          ...schema.properties,
          qqfile: { type: 'string', format: 'binary', description: 'the file' },
        },
      },
      encoding: { qqfile: { contentType: 'application/octet-stream' } },
    }
  }
  const returns = doc?.returns ?? {}
  return {
    post: {
      'operationId': entry.name,
      'tags': [entry.pluginId],
      'summary': doc?.summary ?? entry.name,
      'description': `${doc?.description ?? ''}\n\n${facts.join('\n\n')}\n\nCalled as \`POST ${label.prefix}/api.php\` with \`req=${entry.name}\` (also GET with a query string, or a JSON body).`,
      'x-quire-req': entry.name,
      'x-quire-plugin': entry.pluginId,
      'x-quire-auth': Operation.auth,
      'x-quire-area': Operation.area ?? null,
      'x-quire-writes': Operation.writes,
      'x-quire-errors': entry.errors,
      'requestBody': { required: true, content },
      'responses': {
        '200': {
          description:
            'Always HTTP 200: the `ok` envelope with the answer, or the `nok` envelope with one of the codes above.',
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  {
                    allOf: [
                      { $ref: '#/components/schemas/OkEnvelope' },
                      {
                        type: 'object',
                        properties: {
                          req: { const: entry.name },
                          ...Object.fromEntries(
                            Object.entries(returns).map(([key, text]) => [
                              key,
                              { description: text },
                            ])
                          ),
                        },
                      },
                    ],
                  },
                  {
                    allOf: [
                      { $ref: '#/components/schemas/NokEnvelope' },
                      { type: 'object', properties: { errorCode: { enum: entry.errors } } },
                    ],
                  },
                ],
              },
              example: {
                status: 'ok',
                req: entry.name,
                createdVNB: label.createdVNB,
                ...Object.fromEntries(Object.keys(returns).map((key) => [key, `<${key}>`])),
              },
            },
          },
        },
      },
    },
  }
}

/**
 * The OpenAPI 3.1 document: every operation of the registry as its own path
 * `<prefix>/api.php#<name>` (one POST each, x-quire-* extensions for the wire
 * facts), then the HTTP routes plugins document (media URLs, tus, auth
 * service). docs/api-reference.md describes the conventions.
 */
export function buildOpenApi(catalogue: Catalogue, label: DocumentLabel) {
  const paths: Record<string, unknown> = {}
  const operations = [...catalogue.operations].sort(
    (a, b) => a.pluginId.localeCompare(b.pluginId) || a.name.localeCompare(b.name)
  )
  for (const entry of operations) {
    paths[`${label.prefix}/api.php#${entry.name}`] = operationObject(entry, label)
  }
  for (const [path, item] of Object.entries(catalogue.paths)) {
    paths[path.replace(/^\/live(?=\/)/, label.prefix)] = item
  }
  const plugins = [...new Set(operations.map((entry) => entry.pluginId))]
  return {
    openapi: '3.1.0',
    info: {
      title: 'Quire API',
      version: label.apiVersion,
      description: [
        `The api.php interface (spec part A) and the HTTP routes around it, generated from the operation registry and the operations' VineJS schemas of this server.`,
        `Every operation is one \`POST ${label.prefix}/api.php\` call named by \`req\`: OpenAPI needs one path per operation, so each is listed as \`${label.prefix}/api.php#<name>\` (the fragment is never sent). Parameters travel as a form (application/x-www-form-urlencoded, multipart for uploads); nested values as JSON text or PHP bracket form. The answer is always HTTP 200 with an \`ok\` or \`nok\` envelope.`,
        `Socket messages: the AsyncAPI document at ${label.prefix}/asyncapi.json. Agents: the MCP endpoint at ${label.prefix}/mcp (docs/mcp.md).`,
      ].join('\n\n'),
    },
    servers: [{ url: '/', description: 'this server' }],
    tags: [
      ...plugins.map((id) => ({
        name: id,
        description: `api.php operations of ${id === 'core' ? 'the kernel' : `the ${id} plugin`}`,
      })),
      { name: 'media URLs', description: 'The /dbi URL family (spec 4.A.4)' },
      { name: 'uploads (tus)', description: 'Resumable uploads (tus 1.0.0), spec 4.A.5' },
      { name: 'auth service', description: 'The authentication service (spec part B)' },
    ],
    paths,
    components: {
      schemas: {
        OkEnvelope: {
          type: 'object',
          required: ['status', 'req', 'createdVNB'],
          properties: {
            status: { const: 'ok' },
            req: { type: 'string' },
            createdVNB: { type: 'string', examples: [label.createdVNB] },
          },
        },
        NokEnvelope: {
          type: 'object',
          required: ['status', 'req', 'errorCode', 'errorMsg', 'error'],
          properties: {
            status: { const: 'nok' },
            req: { type: 'string' },
            createdVNB: { type: 'string' },
            errorCode: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
            errorMsg: { type: 'string', description: 'human-readable' },
            error: { type: 'string', description: '`apiProcess<N>: <reason>`' },
            field: { type: 'string', description: 'the parameter refused, when one is' },
            retryAfter: {
              type: 'integer',
              description: 'seconds, for RATE_LIMITED / TOO_MANY_ATTEMPTS',
            },
          },
          description: Object.entries(ERROR_CATALOGUE)
            .map(
              ([code, { process, summary }]) => `- \`${code}\` (apiProcess${process}): ${summary}`
            )
            .join('\n'),
        },
        AuthError: {
          type: 'object',
          properties: {
            success: { const: false },
            error: { type: 'string' },
            message: { type: 'string' },
            errors: { type: 'array', items: { type: 'object' } },
          },
        },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'the auth service jwt',
        },
      },
    },
  }
}
