/*
|--------------------------------------------------------------------------
| Routes
|--------------------------------------------------------------------------
|
| The kernel owns the wire endpoints. Plugins never add api.php routes: they
| register operations, which the dispatcher serves.
*/
import router from '@adonisjs/core/services/router'

import ApiController from '#core/http/api_controller'

// A closure rather than [controller, method]: the container's method injection
// costs a measurable share of a small call, and the controller needs none.
const api = new ApiController()
// The router ignores a trailing slash: this also serves /live/api.php/
router.any('/live/api.php', (ctx) => api.handle(ctx))

router.get('/health', async ({ response }) => {
  response.header('Content-Type', 'application/json')
  return { status: 'ok' }
})
