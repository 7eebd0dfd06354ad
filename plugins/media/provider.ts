import type { ApplicationService } from '@adonisjs/core/types'
import { bindSingletons } from '#core/container/bind_singletons'
import { DerivativeService } from './services/derivative_service.js'
import { MediaService } from './services/media_service.js'
import { MediaStore } from './services/media_store.js'
import { ProfileService } from './services/profile_service.js'

/** The media services, container singletons bound by class. */
export default class MediaProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    bindSingletons(this.app.container, [
      MediaStore,
      DerivativeService,
      MediaService,
      ProfileService,
    ])
  }
}
