import { join, normalize, sep } from 'node:path'
import { stat } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import type { HttpContext } from '@adonisjs/core/http'

const root = () => app.makePath('public', 'assets')

/**
 * GET /admin/assets/*: the console's built files (public/assets). Names
 * carry a content hash, so they are cached for good. No middleware at all:
 * static files need no session.
 */
export async function serveConsoleAsset({ request, response }: HttpContext) {
  const relative = normalize(decodeURIComponent(request.param('*').join('/')))
  const base = root()
  const file = join(base, relative)
  if (!file.startsWith(base + sep) || relative.startsWith('.')) return response.notFound()
  const info = await stat(file).catch(() => null)
  if (!info?.isFile()) return response.notFound()
  response.header('Cache-Control', 'public, max-age=31536000, immutable')
  return response.download(file, true)
}
