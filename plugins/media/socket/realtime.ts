import { inject } from '@adonisjs/core'
import emitter from '@adonisjs/core/services/emitter'
import type { SocketHub } from '#core/socket/hub'
import type { Realtime } from '#core/socket/socket_handler'
import { MediaNames } from '../services/media_names.js'
import '../events.js'

/** The hub signal that tells the other instances which files were just deleted. */
export const FILES_RETIRED_SIGNAL = 'media:retired'

/**
 * Each instance keeps the rows of files it served by name for a while
 * (MEDIA_NAME_CACHE_SECONDS): when a file is deleted on one instance, the
 * others forget it at once through the hub's channel (Redis), instead of
 * serving it until their entry expires.
 */
@inject()
export default class MediaRealtime implements Realtime {
  constructor(private names: MediaNames) {}

  bind(hub: SocketHub) {
    emitter.on('media:files_retired', ({ names }) => hub.signal(FILES_RETIRED_SIGNAL, names))
    hub.onSignal<unknown>(FILES_RETIRED_SIGNAL, (names) => {
      if (Array.isArray(names))
        this.names.forget(names.filter((name): name is string => typeof name === 'string'))
    })
  }
}
