import type { HttpContext } from '@adonisjs/core/http'
import { RpcError } from '#core/rpc/errors'

/**
 * The console's form handling, shared by every console controller (core and
 * plugins): a body that fails its validator, or a write the service refuses,
 * becomes errors flashed to the form (`errorsBag`), and the action answers
 * null so the controller redirects back.
 */

/** The validated body, or null after flashing the first message per field. */
export async function validatedBody<T>(
  ctx: HttpContext,
  validator: { validate(data: unknown): Promise<T> }
): Promise<T | null> {
  try {
    return await validator.validate(ctx.request.body())
  } catch (error: any) {
    const errors: Record<string, string> = {}
    for (const message of error?.messages ?? []) errors[message.field] ??= message.message
    ctx.session.flash('errorsBag', errors)
    return null
  }
}

/** A service refusal (RpcError: a taken code or e-mail, a missing right…) becomes a form error. */
export async function refusalAsFormError<T>(
  ctx: HttpContext,
  action: () => Promise<T>
): Promise<T | null> {
  try {
    return await action()
  } catch (error) {
    if (!(error instanceof RpcError)) throw error
    ctx.session.flash('errorsBag', { form: error.message })
    return null
  }
}
