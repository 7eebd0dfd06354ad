import app from '@adonisjs/core/services/app'
import type { JobHandler } from '#core/plugins/define_plugin'
import { MediaLifecycle, type PurgeJob } from '../services/media_lifecycle.js'

/**
 * media.purge: the bytes and derivatives of files marked deleted (a deleted
 * message, row or book, a file taken out of a cell) are removed from the
 * disk, after the write that deleted them committed.
 */
const purge: JobHandler = async (payload) => {
  const lifecycle = await app.container.make(MediaLifecycle)
  return lifecycle.purge(payload as PurgeJob)
}

export default purge
