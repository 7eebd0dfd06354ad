import type { Logger } from '@adonisjs/core/logger'
import { RpcError, rpcError } from './errors.js'
import { isTransientDbError } from '#core/services/db_errors'

/**
 * The one error mapping of both entry points (api.php and the socket): an
 * RpcError is the client's answer as it is; a transient database conflict asks
 * for a retry; anything else is logged with a reference the client is given,
 * never its message or stack.
 */
export function toRpcError(
  error: unknown,
  logger: Logger,
  context: Record<string, unknown>
): RpcError {
  if (error instanceof RpcError) return error
  if (isTransientDbError(error)) {
    return rpcError(
      'DEADLOCK',
      'Deadlock: the database reported a transient conflict, retry the request'
    )
  }
  const reference = Math.random().toString(36).slice(2, 10)
  logger.error({ err: error, reference, ...context }, 'request failed')
  return rpcError('INTERNAL_ERROR', `Internal error (reference ${reference})`)
}
