/*
|--------------------------------------------------------------------------
| Routes
|--------------------------------------------------------------------------
|
| The kernel owns the wire endpoints. Plugins never add api.php routes: they
| register operations, which the dispatcher serves.
*/
import app from '@adonisjs/core/services/app'
import router from '@adonisjs/core/services/router'

import ApiController from '#core/http/api_controller'
import quireConfig from '#config/quire'
import { registerConsole } from '#admin/routes'
import { readiness } from '#core/http/readiness'
import { registerReferenceRoutes } from '#core/reference/routes'

// Made once, and called from a closure rather than [controller, method]: the container's
// per-request construction and method injection cost a measurable share of a small call.
const api = await app.container.make(ApiController)
// Under every environment prefix (/live, /dev: QUIRE_URL_PREFIXES). The router ignores a
// trailing slash (/live/api.php/), and doubled slashes are collapsed before routing.
for (const prefix of quireConfig.urlPrefixes) {
  router.any(`${prefix}/api.php`, (ctx) => api.handle(ctx))
}

// Liveness: the process answers (asks nothing of the database or Redis).
router.get('/health', async ({ response }) => {
  response.header('Content-Type', 'application/json')
  return { status: 'ok' }
})

// Readiness: the database and Redis (when configured) answer; 503 while one does not.
router.get('/health/ready', async ({ response }) => {
  const state = await readiness()
  response.header('Content-Type', 'application/json')
  response.header('Cache-Control', 'no-store')
  response.status(state.status === 'ok' ? 200 : 503)
  return state
})

// The API reference (/live/openapi.json, /live/asyncapi.json, /docs) and the MCP endpoint (/live/mcp).
await registerReferenceRoutes(router, app)

// The admin console (/admin) and `/`, which leads to it: their middleware stays on their group.
await registerConsole(router, app)
