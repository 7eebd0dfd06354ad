import type { HttpContext } from '@adonisjs/core/http'

/** Requests the console's middleware let through: a signed-in administrator, `me` and `nav` shared. */
const signedIn = new WeakSet<HttpContext>()

export function markSignedInConsolePage(ctx: HttpContext) {
  signedIn.add(ctx)
}

/**
 * A 404 inside the signed-in console (an unknown /admin address, an unknown user, book,
 * table...) is a console page: its layout and navigation stay, so the administrator is not
 * stranded on a bare error page. Anyone not signed in still gets the plain 404 (nothing of the
 * console shows). Answers whether it rendered the page.
 */
export async function renderConsoleNotFound(ctx: HttpContext): Promise<boolean> {
  if (!signedIn.has(ctx)) return false
  ctx.response.status(404)
  ctx.response.send(await ctx.inertia.render('not_found', {}))
  return true
}
