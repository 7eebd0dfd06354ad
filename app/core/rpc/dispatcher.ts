import type { Logger } from '@adonisjs/core/logger'
import type { ApplicationService } from '@adonisjs/core/types'
import { errors as vineErrors } from '@vinejs/vine'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { AccessService } from '#core/services/access_service'
import type { UserService } from '#core/services/user_service'
import type { Actor, BaseOperation, OperationClass, OperationContext } from './base_operation.js'
import { ERROR_CATALOGUE, RpcError, rpcError, type ErrorCode } from './errors.js'
import type { Params, UploadedFile } from './params.js'
import { isTransientDbError } from '#core/services/db_errors'
import { resolveActor } from '#core/auth/resolve_actor'

export interface RpcRequest {
  params: Params
  files: UploadedFile[]
  ip: string
}

interface LoadedOperation {
  Operation: OperationClass
  instance: BaseOperation
}

/** The parameter that names the operation: `req`, or `r` in some examples and clients. */
export function operationName(params: Params): string {
  const value = params.req ?? params.r
  return typeof value === 'string' ? value.trim() : ''
}

const scalar = (value: unknown) => (typeof value === 'string' ? value.trim() : '')

/**
 * Runs one api.php call: finds the operation, authenticates, validates, runs
 * it and wraps the answer in the envelope. Every failure — including an
 * unexpected exception — becomes a `nok` envelope; nothing escapes as a 500.
 */
export class Dispatcher {
  private loaded = new Map<string, Promise<LoadedOperation>>()
  readonly createdVNB: string

  constructor(
    private app: ApplicationService,
    private registry: PluginRegistry,
    private access: AccessService,
    private users: UserService,
    private logger: Logger,
    label: { envLabel: string; apiVersion: string }
  ) {
    this.createdVNB = `${label.envLabel}-${label.apiVersion}`
  }

  async dispatch(request: RpcRequest): Promise<Record<string, unknown>> {
    const req = operationName(request.params)
    try {
      const result = await this.run(req, request)
      return { status: 'ok', req, createdVNB: this.createdVNB, ...result }
    } catch (error) {
      return this.failure(req, error)
    }
  }

  /** The `nok` envelope for an error: documented code, message, and `apiProcess<N>` reason. */
  failure(req: string, error: unknown): Record<string, unknown> {
    let rpc: RpcError
    if (error instanceof RpcError) {
      rpc = error
    } else if (isTransientDbError(error)) {
      rpc = rpcError(
        'DEADLOCK',
        'Deadlock: the database reported a transient conflict, retry the request'
      )
    } else {
      const reference = Math.random().toString(36).slice(2, 10)
      this.logger.error({ err: error, req, reference }, 'api.php operation failed')
      rpc = rpcError('INTERNAL_ERROR', `Internal error (reference ${reference})`)
    }
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

  private async run(req: string, request: RpcRequest) {
    if (req === '')
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: req (the operation name)')
    const { Operation, instance } = await this.load(req)

    const ctx: OperationContext = {
      req,
      params: request.params,
      files: request.files,
      actor: null,
      ip: request.ip,
      logger: this.logger,
    }
    if (Operation.auth !== 'none') {
      ctx.actor = await this.authenticate(
        request.params,
        Operation.auth === 'session_or_public_table'
      )
      if (ctx.actor) this.enforceRestrictions(Operation, ctx.actor, request.params)
    }

    const input = Operation.validator
      ? await this.validate(Operation, request.params)
      : request.params
    return instance.handle(input, ctx)
  }

  private load(req: string): Promise<LoadedOperation> {
    let loading = this.loaded.get(req)
    if (!loading) {
      const claim = this.registry.operations.get(req)
      if (!claim) throw rpcError('UNKNOWN_OPERATION', `Unknown operation: ${req}`)
      loading = claim.load().then(async ({ default: Operation }) => ({
        Operation,
        instance: await this.app.container.make(Operation),
      }))
      loading.catch(() => this.loaded.delete(req))
      this.loaded.set(req, loading)
    }
    return loading
  }

  /**
   * o_u + sesskey identify the caller. u_c names the user acted for: o_u itself
   * (by code, e-mail or phone), or another user o_u is a delegate of.
   */
  private async authenticate(params: Params, optional: boolean): Promise<Actor | null> {
    const sesskey = scalar(params.sesskey)
    const ou = scalar(params.o_u)
    if (sesskey === '') {
      if (optional) return null
      throw rpcError('MISSING_PARAMETER', 'Missing parameter: sesskey')
    }
    if (ou === '') throw rpcError('MISSING_PARAMETER', 'Missing parameter: o_u')

    return resolveActor(this.access, this.users, { o_u: ou, u_c: scalar(params.u_c), sesskey })
  }

  /** What a restricted session may not do, checked before any operation runs. */
  private enforceRestrictions(Operation: OperationClass, actor: Actor, params: Params) {
    const restrictions = actor.restrictions
    if (restrictions.readonly && Operation.writes) {
      throw rpcError(
        'READONLY_SESSION',
        `${Operation.operation} writes, and this session is read-only`
      )
    }
    const hidden =
      (Operation.area === 'messages' && restrictions.hideMessages) ||
      (Operation.area === 'tables' && restrictions.hideTables) ||
      (Operation.area === 'events' && restrictions.hideEvents)
    if (hidden) throw rpcError('RESTRICTED_SESSION', `This session may not use ${Operation.area}`)
    if (restrictions.carnet_code) {
      const bc = scalar(params.b_c)
      const bo = scalar(params.b_o)
      if (
        (bc !== '' && bc !== restrictions.carnet_code) ||
        (bo !== '' && restrictions.carnet_owner && bo !== restrictions.carnet_owner)
      ) {
        throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
      }
    }
  }

  private async validate(Operation: OperationClass, params: Params) {
    try {
      return await Operation.validator!.validate(params)
    } catch (error) {
      if (error instanceof vineErrors.E_VALIDATION_ERROR) {
        const first = (error.messages as { field: string; rule: string; message: string }[])[0]
        const code: ErrorCode =
          first.rule === 'required' ? 'MISSING_PARAMETER' : 'INVALID_PARAMETER'
        const message =
          code === 'MISSING_PARAMETER'
            ? `Missing parameter: ${first.field}`
            : `Invalid parameter ${first.field}: ${first.message}`
        throw rpcError(code, message, { field: first.field })
      }
      throw error
    }
  }
}

export { ERROR_CATALOGUE }
