import type { HttpContext } from '@adonisjs/core/http'
import { errors as vineErrors } from '@vinejs/vine'
import { errors as limiterErrors } from '@adonisjs/limiter'
import { AuthError, authError } from '../errors.js'

/** Every answer of the auth service: JSON, never cached (it carries tokens). */
export function send(ctx: HttpContext, status: number, body: unknown) {
  ctx.response.status(status)
  ctx.response.header('Cache-Control', 'no-store')
  ctx.response.header('Pragma', 'no-cache')
  ctx.response.json(body)
}

/** `errors` of a validation_error: field -> messages, as VineJS reported them. */
function fieldErrors(messages: { field: string; message: string }[]) {
  const errors: Record<string, string[]> = {}
  for (const { field, message } of messages) (errors[field || 'body'] ??= []).push(message)
  return errors
}

/** Any thrown value as the auth service's error body (7.B); unknown errors are logged, never shown. */
export function toAuthError(error: unknown, ctx: HttpContext): AuthError {
  if (error instanceof AuthError) return error
  if (error instanceof vineErrors.E_VALIDATION_ERROR) {
    return authError('validation_error', 'The request body is invalid', {
      errors: fieldErrors(error.messages),
    })
  }
  if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) {
    const retryAfter = Math.max(1, error.response.availableIn)
    return authError('too_many_requests', `Too many requests, retry in ${retryAfter} seconds`, {
      retry_after: retryAfter,
    })
  }
  const status = (error as { status?: number })?.status
  if (status && status >= 400 && status < 500) {
    // Body parser failures: malformed JSON, unsupported or oversized body.
    return authError(
      'invalid_json',
      'The request body could not be read as JSON or urlencoded data'
    )
  }
  ctx.logger.error({ err: error }, 'auth service: unexpected error')
  return authError('internal_error', 'Unexpected server error')
}

export function sendError(ctx: HttpContext, error: unknown) {
  const failure = toAuthError(error, ctx)
  if (failure.code === 'unauthorized') ctx.response.header('WWW-Authenticate', 'Bearer')
  if (failure.code === 'too_many_requests')
    ctx.response.header('Retry-After', String(failure.extra.retry_after))
  send(ctx, failure.status, failure.toBody())
}

/**
 * Runs a controller action: its result is the 200 body, anything thrown
 * becomes an error body (AdonisJS would otherwise hand it to the global
 * exception handler, which knows nothing of 7.B).
 */
export async function respond(ctx: HttpContext, action: () => Promise<unknown>) {
  try {
    send(ctx, 200, await action())
  } catch (error) {
    sendError(ctx, error)
  }
}
