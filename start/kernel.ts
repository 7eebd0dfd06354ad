/*
|--------------------------------------------------------------------------
| HTTP kernel
|--------------------------------------------------------------------------
|
| Server middleware runs on every request, matched or not, so it is kept to
| the bare minimum (see STACK.md, "what middleware costs"). api.php parses its
| own parameters; anything heavier belongs on a route group.
*/
import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.errorHandler(() => import('#exceptions/handler'))

// No container-bindings middleware: nothing is constructed with @inject() during a request,
// and binding the context on every call was a measurable share of a small api.php call.
server.use([])

router.use([])

export const middleware = router.named({})
