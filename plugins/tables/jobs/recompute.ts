import type { JobHandler } from '#core/plugins/define_plugin'
import { rowsService, type RecomputeJob } from '../services/rows_service.js'

/**
 * tables.recompute: rows of other tables that show data of written or
 * deleted rows (link captions, lookups, rollups) are recomputed here, after
 * the write committed, instead of inside the write's transaction.
 */
const recompute: JobHandler = async (payload) => {
  return rowsService.runRecomputeJob(payload as RecomputeJob)
}

export default recompute
