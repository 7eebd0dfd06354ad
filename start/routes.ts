/*
|--------------------------------------------------------------------------
| Routes
|--------------------------------------------------------------------------
|
| The kernel owns the wire endpoints. Plugins never add api.php routes: they
| register operations, which the dispatcher serves.
*/
import router from '@adonisjs/core/services/router'

const ApiController = () => import('#core/http/api_controller')

// The router ignores a trailing slash: this also serves /live/api.php/
router.any('/live/api.php', [ApiController, 'handle'])

router.get('/health', async ({ response }) => {
  response.header('Content-Type', 'application/json')
  return { status: 'ok' }
})
