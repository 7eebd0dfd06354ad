import type { PluginRoutes } from '#core/plugins/define_plugin'

const InvitationPageController = () => import('./http/invitation_page_controller.js')

/** The link of an invitation to an address with no account (README, "Invitations by address"). */
const registerBooksRoutes: PluginRoutes = (router) => {
  router.get('/invite/:token', [InvitationPageController, 'show']).as('books.invitation_page')
}

export default registerBooksRoutes
