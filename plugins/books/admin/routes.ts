import type { PluginAdminRoutes } from '#core/plugins/define_plugin'

const BooksController = () => import('./controllers/books_controller.js')

/** The books plugin's console pages, mounted at /admin/books (plugin.ts `admin`). */
const registerBooksConsole: PluginAdminRoutes = (router) => {
  router.get('/', [BooksController, 'index']).as('index')
  router.post('/', [BooksController, 'store']).as('store')
  router.get('/:id', [BooksController, 'show']).as('show')
  router.post('/:id/invite', [BooksController, 'invite']).as('invite')
  router.post('/:id/members/:userId/right', [BooksController, 'setRight']).as('right')
  router.post('/:id/members/:userId/remove', [BooksController, 'removeMember']).as('remove')
  router.post('/:id/archive', [BooksController, 'archive']).as('archive')
  router.post('/:id/delete', [BooksController, 'destroy']).as('delete')
}

export default registerBooksConsole
