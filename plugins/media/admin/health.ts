import db from '@adonisjs/lucid/services/db'
import type { HealthPart, HealthSection } from '#core/plugins/define_plugin'
import { formatBytes } from '#core/health/format'
import env from '#start/env'
import mediaConfig from '../config.js'

/** The media plugin's section of the Health page: what its files take. */
export default class MediaHealth implements HealthPart {
  async sections(): Promise<HealthSection[]> {
    const rows = await db
      .from('media_files')
      .groupBy('del')
      .select('del')
      .count('* as files')
      .sum('size as bytes')
    let kept = { files: 0, bytes: 0 }
    let purging = { files: 0, bytes: 0 }
    for (const row of rows) {
      const counted = { files: Number(row.files ?? 0), bytes: Number(row.bytes ?? 0) }
      if (Number(row.del) === 0 || row.del === false) kept = counted
      else purging = counted
    }
    return [
      {
        key: 'media',
        title: 'Media storage',
        ok: true,
        lines: [
          { label: 'Storage', value: env.get('MEDIA_DISK', 'fs') === 's3' ? 'S3 bucket' : 'Disk' },
          { label: 'Files', value: kept.files.toLocaleString('en') },
          { label: 'Size', value: formatBytes(kept.bytes) },
          {
            label: 'Deleted, awaiting removal',
            value: `${purging.files.toLocaleString('en')} (${formatBytes(purging.bytes)})`,
          },
          { label: 'Largest upload allowed', value: formatBytes(mediaConfig.maxUploadBytes) },
        ],
      },
    ]
  }
}
