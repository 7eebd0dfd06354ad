import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/** Registers the applications allowed to start a sign-in ({auth_url}/authorize) and their redirect URIs. */
export default class AuthClient extends BaseCommand {
  static commandName = 'auth:client'
  static description =
    'Register, update, remove or list OIDC-style clients of the authentication service'
  static options: CommandOptions = { startApp: true }

  @args.string({ description: 'client_id (omit to list the registered clients)', required: false })
  declare clientId?: string

  @args.spread({ description: 'Exact redirect URIs allowed for this client', required: false })
  declare redirectUris?: string[]

  @flags.string({ description: 'Display name of the client' })
  declare name?: string

  @flags.boolean({ description: 'Remove the client' })
  declare remove: boolean

  async run() {
    // Imported here: listing the commands must not load the application's services.
    const { AuthorizationService } = await import('../services/authorization_service.js')
    const authorizations = await this.app.container.make(AuthorizationService)
    if (!this.clientId) {
      const clients = await authorizations.listClients()
      if (clients.length === 0) this.logger.info('No client registered')
      for (const client of clients)
        this.logger.log(`${client.clientId}  ${client.name}  ${client.redirectUris.join(' ')}`)
      return
    }
    if (this.remove) {
      const removed = await authorizations.removeClient(this.clientId)
      if (removed) this.logger.success(`Removed client ${this.clientId}`)
      else this.logger.warning(`No client ${this.clientId}`)
      return
    }
    const uris = this.redirectUris ?? []
    const invalid = uris.filter((uri) => !URL.canParse(uri))
    if (uris.length === 0 || invalid.length > 0) {
      this.logger.error(
        invalid.length
          ? `Not absolute URLs: ${invalid.join(', ')}`
          : 'Give at least one redirect URI'
      )
      this.exitCode = 1
      return
    }
    await authorizations.registerClient({
      clientId: this.clientId,
      name: this.name ?? this.clientId,
      redirectUris: uris,
    })
    this.logger.success(`Client ${this.clientId} may redirect to ${uris.join(', ')}`)
  }
}
