import type { Logger } from '@adonisjs/core/logger'
import type { ApplicationService } from '@adonisjs/core/types'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import type {
  Actor,
  BaseOperation,
  OperationArea,
  OperationAuth,
  OperationClass,
  OperationContext,
  OperationFiles,
} from './base_operation.js'
import { ERROR_CATALOGUE, rpcError } from './errors.js'
import { operationName, type Params, type UploadedFile } from './params.js'
import { toRpcError } from './failure.js'
import { validateWire } from './wire.js'
import {
  credentialsOf,
  requiredCredentials,
  resolveActor,
  resolveActorNow,
  type Credentials,
} from '#core/auth/resolve_actor'
import { GatewayAuth, isGatewaySesskey, type GatewayPrincipal } from '#core/auth/gateway_auth'
import { enforceRestrictions } from '#core/auth/restrictions'

export interface RpcRequest {
  params: Params
  files: UploadedFile[]
  ip: string
}

interface LoadedOperation {
  Operation: OperationClass
  instance: BaseOperation
  /** What the session restrictions look at (enforceRestrictions), made once. */
  scope: { label: string; writes: boolean; area?: OperationArea }
}

/**
 * Runs one api.php call: finds the operation, authenticates, validates, runs
 * it and wraps the answer in the envelope. Every failure — including an
 * unexpected exception — becomes a `nok` envelope; nothing escapes as a 500.
 */
export class Dispatcher {
  private loaded = new Map<string, Promise<LoadedOperation>>()
  /** The operations loaded so far: a call to one of them waits for no promise to find it. */
  private ready = new Map<string, LoadedOperation>()
  readonly createdVNB: string

  constructor(
    private app: ApplicationService,
    private registry: PluginRegistry,
    private access: AccessService,
    private users: UserService,
    private logger: Logger,
    label: { envLabel: string; apiVersion: string },
    private gateways = new GatewayAuth()
  ) {
    this.createdVNB = `${label.envLabel}-${label.apiVersion}`
  }

  /**
   * One call, in one async function: each layer of async functions a call goes through costs
   * promises and microtask turns of its own, on every api.php request.
   */
  async dispatch(request: RpcRequest): Promise<Record<string, unknown>> {
    const req = operationName(request.params)
    try {
      if (req === '')
        throw rpcError('MISSING_PARAMETER', 'Missing parameter: req (the operation name)')
      const { Operation, instance, scope } = this.ready.get(req) ?? (await this.load(req))

      const ctx: OperationContext = {
        req,
        params: request.params,
        files: request.files,
        actor: null,
        ip: request.ip,
        logger: this.logger,
      }
      if (Operation.auth !== 'none') {
        const credentials = this.credentialsFor(request.params, Operation.auth)
        if (credentials === null) {
          ctx.gateway = null
        } else if (this.viaGateway(credentials, Operation.auth)) {
          Object.assign(ctx, await this.authenticateGateway(credentials, Operation.auth))
        } else {
          ctx.actor =
            resolveActorNow(this.access, credentials) ??
            (await resolveActor(this.access, this.users, credentials))
          ctx.gateway = null
        }
        if (ctx.actor) {
          ctx.actor.address = request.ip
          enforceRestrictions(scope, ctx.actor, request.params)
        }
      }

      const input = Operation.validator
        ? await validateWire(Operation.validator, request.params)
        : request.params
      const result = await instance.handle(input, ctx)
      return { status: 'ok', req, createdVNB: this.createdVNB, ...result }
    } catch (error) {
      return this.failure(req, error)
    }
  }

  /** The `nok` envelope for an error: documented code, message, and `apiProcess<N>` reason. */
  failure(req: string, error: unknown): Record<string, unknown> {
    const rpc = toRpcError(error, this.logger, { req })
    const { process, ...extra } = rpc.extra
    return {
      status: 'nok',
      req,
      createdVNB: this.createdVNB,
      errorCode: rpc.code,
      errorMsg: rpc.message,
      error: `apiProcess${rpc.process}: ${typeof process === 'string' ? process : rpc.message}`,
      ...extra,
    }
  }

  /**
   * What the operation `req` takes as uploaded files (its `static files`); null when it takes
   * none or is not an operation of this server. The body parser asks before writing a file part.
   */
  async filesOf(req: string): Promise<OperationFiles | null> {
    if (!this.registry.operations.has(req)) return null
    const { Operation } = this.ready.get(req) ?? (await this.load(req))
    return Operation.files ?? null
  }

  private load(req: string): Promise<LoadedOperation> {
    let loading = this.loaded.get(req)
    if (!loading) {
      const claim = this.registry.operations.get(req)
      if (!claim) throw rpcError('UNKNOWN_OPERATION', `Unknown operation: ${req}`)
      loading = claim.load().then(async ({ default: Operation }) => {
        const loaded = {
          Operation,
          instance: await this.app.container.make(Operation),
          scope: { label: Operation.operation, writes: Operation.writes, area: Operation.area },
        }
        this.ready.set(req, loaded)
        return loaded
      })
      loading.catch(() => this.loaded.delete(req))
      this.loaded.set(req, loading)
    }
    return loading
  }

  /**
   * o_u + sesskey identify the caller. u_c names the user acted for: o_u itself
   * (by code, e-mail or phone), or another user o_u is a delegate of. Without a
   * sesskey, an operation that may serve a public table runs anonymously (null here). A
   * gateway's sesskey (its own prefix) goes to the gateways' authenticator, for
   * the operations that take one: its actor is the sender u_c names.
   */
  private credentialsFor(params: Params, auth: OperationAuth): Credentials | null {
    if (auth === 'session_or_public_table' && credentialsOf(params).sesskey === '') return null
    return requiredCredentials(params)
  }

  private viaGateway(credentials: Credentials, auth: OperationAuth): boolean {
    return (
      auth === 'gateway' || (auth === 'session_or_gateway' && isGatewaySesskey(credentials.sesskey))
    )
  }

  private async authenticateGateway(
    credentials: Credentials,
    auth: OperationAuth
  ): Promise<{ actor: Actor | null; gateway: GatewayPrincipal }> {
    const gateways = await this.gateways.authenticator()
    const gateway = await gateways.authenticate(credentials)
    const actor = auth === 'gateway' ? null : await gateways.actorFor(gateway, credentials)
    return { actor, gateway }
  }
}

export { ERROR_CATALOGUE }
