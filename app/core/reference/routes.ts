import { readFile } from 'node:fs/promises'
import type { ApplicationService } from '@adonisjs/core/types'
import type { Router } from '@adonisjs/core/http'
import quireConfig from '#config/quire'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { ReferenceService } from './reference_service.js'

const DOCS_ENTRY = 'resources/docs/app.ts'

/** The built /docs bundle's files (vite's manifest), or null before `npm run build:console`. */
async function docsAssets(app: ApplicationService) {
  const manifest = await readFile(app.makePath('public/assets/.vite/manifest.json'), 'utf8')
    .then((text) => JSON.parse(text) as Record<string, { file: string; css?: string[] }>)
    .catch(() => null)
  const entry = manifest?.[DOCS_ENTRY]
  return entry ? { script: entry.file, styles: entry.css ?? [] } : null
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * The API reference (OpenAPI at <prefix>/openapi.json, AsyncAPI at
 * <prefix>/asyncapi.json), its rendering at /docs (Scalar, bundled by the
 * console's vite build: no CDN) and the MCP endpoint (<prefix>/mcp), under
 * every environment prefix. No middleware: none needs a cookie session.
 * docs/api-reference.md, docs/mcp.md.
 */
export async function registerReferenceRoutes(router: Router, app: ApplicationService) {
  app.container.singleton(ReferenceService, async (resolver) => {
    return new ReferenceService(await resolver.make(PluginRegistry), quireConfig)
  })
  const { default: McpEndpoint } = await import('#core/mcp/mcp_endpoint')

  for (const prefix of quireConfig.urlPrefixes) {
    router.get(`${prefix}/openapi.json`, async ({ response }) => {
      const reference = await app.container.make(ReferenceService)
      response.header('Content-Type', 'application/json; charset=utf-8')
      response.header('Access-Control-Allow-Origin', '*')
      return response.send(await reference.openApi(prefix))
    })
    router.get(`${prefix}/asyncapi.json`, async ({ request, response }) => {
      const reference = await app.container.make(ReferenceService)
      response.header('Content-Type', 'application/json; charset=utf-8')
      response.header('Access-Control-Allow-Origin', '*')
      return response.send(await reference.asyncApi(prefix, request.host() ?? 'localhost'))
    })
    router.route(`${prefix}/mcp`, ['GET', 'POST', 'DELETE'], async (ctx) => {
      const endpoint = await app.container.make(McpEndpoint)
      return endpoint.handle(ctx)
    })
  }

  router.get('/docs', async ({ response }) => {
    const assets = await docsAssets(app)
    response.header('Content-Type', 'text/html; charset=utf-8')
    response.header('Cache-Control', 'no-store')
    if (!assets) {
      response.status(503)
      return response.send(
        '<!doctype html><meta charset="utf-8"><title>API reference</title><p>The API reference page is not built: run <code>npm run build:console</code>. The documents themselves are at /live/openapi.json and /live/asyncapi.json.</p>'
      )
    }
    const prefix = quireConfig.urlPrefixes[0] ?? '/live'
    const base = '/admin/assets/'
    return response.send(
      [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>Quire API reference</title>',
        ...assets.styles.map((css) => `<link rel="stylesheet" href="${base}${escapeHtml(css)}">`),
        `<script type="module" src="${base}${escapeHtml(assets.script)}"></script>`,
        '</head><body>',
        `<div id="docs" data-prefix="${escapeHtml(prefix)}"><noscript>The reference needs JavaScript; the documents are at ${escapeHtml(prefix)}/openapi.json and ${escapeHtml(prefix)}/asyncapi.json.</noscript></div>`,
        '</body></html>',
      ].join('')
    )
  })
}
