import app from '@adonisjs/core/services/app'
import type { Group } from '@japa/runner/core'
import type { Browser } from 'playwright-core'
import { ensureConsoleBuilt } from '#admin/build'
import { login } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { hasChromium, launch } from './chromium.js'

/**
 * The group's browser: the console built and Chromium launched once before
 * its tests (when there is a Chromium; the tests skip otherwise), closed after.
 */
export function useConsoleBrowser(group: Group): () => Browser {
  let browser: Browser | undefined
  group.setup(async () => {
    if (!hasChromium) return
    await ensureConsoleBuilt(app.makePath())
    browser = await launch()
  })
  group.teardown(async () => {
    await browser?.close()
  })
  return () => browser!
}

/** A page in a context of its own, with the errors it throws collected (a test expects none). */
export async function openPage(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  return { context, page, errors }
}

/** api.php as the user, through a session of its own: what the console then shows. */
export async function apiAs(user: { code: string; email: string | null }) {
  const session = await login(user)
  return (params: Record<string, unknown>) =>
    rpc({ o_u: user.code, u_c: user.code, sesskey: session.sesskey, ...params })
}
