import { createHash } from 'node:crypto'
import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '#core/rpc/base_operation'
import { Dispatcher } from '#core/rpc/dispatcher'
import { RpcError } from '#core/rpc/errors'
import { resolveActor, type Credentials } from '#core/auth/resolve_actor'
import { AccessService } from '#core/services/access_service'
import { UserService } from '#core/services/user_service'
import { ReferenceService } from '#core/reference/reference_service'
import type { OperationEntry } from '#core/reference/catalogue'

/** Auth modes whose operations a user's session may call. */
const SESSION_MODES = new Set(['session', 'session_or_public_table', 'session_or_gateway'])

/** Sesskeys made from an oauthkey, by hash of o_u + oauthkey: one session per key, not per request. */
const OAUTH_SESSIONS_MAX = 1000

/**
 * The MCP endpoint (`<prefix>/mcp`, Streamable HTTP, stateless: each POST is
 * one JSON-RPC exchange). Its tools are the api.php operations the caller's
 * session may call, generated from the registry with their parameters' JSON
 * Schema; a tool call is an api.php call through the same Dispatcher (same
 * authentication, restrictions, validation, envelope). docs/mcp.md.
 */
@inject()
export default class McpEndpoint {
  private oauthSessions = new Map<string, string>()

  constructor(
    private dispatcher: Dispatcher,
    private reference: ReferenceService,
    private access: AccessService,
    private users: UserService
  ) {}

  async handle(ctx: HttpContext) {
    const { request, response } = ctx
    let credentials: Credentials
    let actor: Actor
    try {
      credentials = await this.credentialsOf(ctx)
      actor = await resolveActor(this.access, this.users, credentials)
    } catch (error) {
      const rpc = error instanceof RpcError ? error : null
      if (!rpc) throw error
      return this.refuse(ctx, rpc)
    }

    const tools = await this.toolsFor(actor)
    const server = new Server(
      { name: 'quire', version: '1.0.0' },
      {
        capabilities: { tools: {} },
        instructions:
          'Tools are the operations of the Quire api.php interface. Each answers its JSON envelope: status ok with the fields described, or status nok with errorCode (docs/errors.md).',
      }
    )
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools.map((entry) => ({
        name: entry.name,
        title: entry.doc?.summary,
        description: describe(entry),
        inputSchema: inputSchemaOf(entry),
        annotations: { readOnlyHint: !entry.Operation.writes },
      })),
    }))
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const entry = tools.find((tool) => tool.name === call.params.name)
      if (!entry) {
        return {
          isError: true,
          content: [{ type: 'text' as const, text: `Unknown tool: ${call.params.name}` }],
        }
      }
      const envelope = await this.dispatcher.dispatch({
        params: { ...(call.params.arguments ?? {}), req: entry.name, ...credentials },
        files: [],
        ip: request.ip(),
      })
      return {
        isError: envelope.status !== 'ok',
        content: [{ type: 'text' as const, text: JSON.stringify(envelope) }],
      }
    })

    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    response.response.on('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(request.request, response.response)
  }

  /**
   * o_u + sesskey (+ u_c) from X-Quire-O-U / X-Quire-Sesskey / X-Quire-U-C, or
   * `Authorization: Bearer <sesskey>` beside X-Quire-O-U; or X-Quire-Oauthkey,
   * exchanged once for a sesskey through getOrCreateSessKey.
   */
  private async credentialsOf(ctx: HttpContext): Promise<Credentials> {
    const header = (name: string) => String(ctx.request.header(name) ?? '').trim()
    const bearer = /^Bearer\s+(\S+)$/i.exec(header('authorization'))?.[1] ?? ''
    const principal = header('x-quire-o-u')
    const actingFor = header('x-quire-u-c')
    let sesskey = header('x-quire-sesskey') || bearer
    const oauthkey = header('x-quire-oauthkey')
    if (principal === '') throw new RpcError('MISSING_PARAMETER', 'Missing header: X-Quire-O-U')
    if (sesskey === '' && oauthkey !== '')
      sesskey = await this.sessionFromOauthkey(ctx, principal, oauthkey)
    if (sesskey === '') {
      throw new RpcError(
        'MISSING_PARAMETER',
        'Missing header: X-Quire-Sesskey (or X-Quire-Oauthkey)'
      )
    }
    return { o_u: principal, u_c: actingFor, sesskey }
  }

  private async sessionFromOauthkey(ctx: HttpContext, principal: string, oauthkey: string) {
    const key = createHash('sha256').update(`${principal}\n${oauthkey}`).digest('hex')
    const known = this.oauthSessions.get(key) ?? ''
    const envelope = await this.dispatcher.dispatch({
      params: { req: 'getOrCreateSessKey', o_u: principal, oauthkey, sesskey: known },
      files: [],
      ip: ctx.request.ip(),
    })
    if (envelope.status !== 'ok') {
      this.oauthSessions.delete(key)
      throw new RpcError(envelope.errorCode as any, String(envelope.errorMsg))
    }
    if (this.oauthSessions.size >= OAUTH_SESSIONS_MAX) this.oauthSessions.clear()
    this.oauthSessions.set(key, String(envelope.sesskey))
    return String(envelope.sesskey)
  }

  /** The operations this session may call: session auth, no file parts, not hidden or read-only-refused. */
  private async toolsFor(actor: Actor): Promise<OperationEntry[]> {
    const { operations } = await this.reference.catalogue()
    const restrictions = actor.restrictions
    return operations
      .filter(({ Operation }) => SESSION_MODES.has(Operation.auth) && !Operation.files)
      .filter(({ Operation }) => !(Operation.writes && restrictions.readonly))
      .filter(({ Operation }) => {
        if (Operation.area === 'messages') return !restrictions.hideMessages
        if (Operation.area === 'tables') return !restrictions.hideTables
        if (Operation.area === 'events') return !restrictions.hideEvents
        return true
      })
      .sort((a, b) => a.name.localeCompare(b.name))
  }

  /** 401 with a JSON-RPC error body: the MCP client reports it as a failed request. */
  private refuse({ response }: HttpContext, error: RpcError) {
    response.status(401)
    response.header('WWW-Authenticate', 'X-Quire-Sesskey')
    return response.json({
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: `${error.code}: ${error.message}`,
        data: { errorCode: error.code },
      },
      id: null,
    })
  }
}

function describe(entry: OperationEntry): string {
  const { doc, Operation } = entry
  const lines = [doc?.summary ?? entry.name, doc?.description ?? '']
  const returns = Object.entries(doc?.returns ?? {})
  if (returns.length)
    lines.push(`Answers: ${returns.map(([key, text]) => `${key} (${text})`).join('; ')}.`)
  lines.push(
    `${Operation.writes ? 'Writes' : 'Reads only'}${Operation.area ? `; area ${Operation.area}` : ''}.`
  )
  lines.push(`Nok codes: ${entry.errors.join(', ')}.`)
  return lines.filter(Boolean).join('\n')
}

/** The tool's input: the operation's parameters (credentials come from the MCP request's headers). */
function inputSchemaOf(entry: OperationEntry) {
  const { properties = {}, required = [] } = entry.params
  return {
    type: 'object' as const,
    properties,
    ...(required.length ? { required } : {}),
  }
}
