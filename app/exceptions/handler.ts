import { randomBytes } from 'node:crypto'
import { ExceptionHandler, type HttpContext } from '@adonisjs/core/http'
import { renderConsoleNotFound } from '#admin/console_errors'

/** An error's HTTP status when it carries one (404 for an unknown route), else 500. */
function statusOf(error: unknown): number {
  const status = (error as { status?: unknown } | null)?.status
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : 500
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Payload too large',
}

/** Browsers get a small page; programs (and everything under the wire prefixes) get JSON. */
function wantsHtml(ctx: HttpContext): boolean {
  const accept = ctx.request.header('accept') ?? ''
  return (
    accept.includes('text/html') &&
    !/^\/(?:live|dev|auth|__transmit)(?:\/|$)/.test(ctx.request.url())
  )
}

const page = (title: string, detail: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} — Quire</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p{color:#555}</style></head><body><h1>${title}</h1><p>${detail}</p></body></html>`

/**
 * Errors outside api.php (api.php answers every failure itself, as a `nok`
 * envelope). Never the framework's debug page, in any mode: no stack trace,
 * source line or module path reaches a client. A client's mistake (an unknown
 * route) gets its status and a one-line answer; anything else is a 500 with a
 * reference that the log also carries, next to the stack.
 */
export default class HttpExceptionHandler extends ExceptionHandler {
  protected debug = false
  private references = new WeakMap<HttpContext, string>()

  async report(error: unknown, ctx: HttpContext) {
    if (statusOf(error) < 500) return
    const reference = randomBytes(4).toString('hex')
    this.references.set(ctx, reference)
    ctx.logger.error({ err: error, reference, url: ctx.request.url() }, 'request failed')
  }

  async handle(error: unknown, ctx: HttpContext) {
    const status = statusOf(error)
    const reference = this.references.get(ctx)
    const title = status >= 500 ? 'Server error' : (TITLES[status] ?? 'Request refused')
    const detail =
      status >= 500
        ? `Something went wrong on our side (reference ${reference}).`
        : status === 404
          ? 'There is nothing at this address.'
          : 'The request was refused.'
    // A 404 inside the signed-in console keeps the console's layout and navigation.
    if (status === 404 && (await renderConsoleNotFound(ctx))) return
    ctx.response.status(status)
    if (wantsHtml(ctx)) {
      ctx.response.header('Content-Type', 'text/html; charset=utf-8')
      return ctx.response.send(page(title, detail))
    }
    ctx.response.header('Content-Type', 'application/json')
    const code = status >= 500 ? 'internal_error' : title.toLowerCase().replaceAll(' ', '_')
    return ctx.response.send(
      JSON.stringify({
        error: code,
        message: status >= 500 ? detail : title,
        ...(reference ? { reference } : {}),
      })
    )
  }
}
