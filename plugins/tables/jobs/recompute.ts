import app from '@adonisjs/core/services/app'
import type { JobHandler } from '#core/plugins/define_plugin'
import { RecomputeService, type RecomputeJob } from '../services/recompute_service.js'

/**
 * tables.recompute: rows of other tables that show data of written or
 * deleted rows (link captions, lookups, rollups) are recomputed here, after
 * the write committed, instead of inside the write's transaction.
 */
const recompute: JobHandler = async (payload) => {
  const service = await app.container.make(RecomputeService)
  return service.runJob(payload as RecomputeJob)
}

export default recompute
