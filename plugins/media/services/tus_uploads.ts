import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import encryption from '@adonisjs/core/services/encryption'
import mediaConfig from '../config.js'

/** A resumable upload's id: 32 hex digits (TusController's namingFunction). */
const UPLOAD_ID = /^[0-9a-f]{32}$/

/**
 * The folder of resumable uploads (MEDIA_TUS_DIR): per upload `<id>` (the
 * bytes so far), `<id>.json` (@tus/file-store's record: size, offset,
 * metadata, creation_date) and, once finished, `<id>.result.json` (what
 * upload_meta answers). Everything of an upload goes MEDIA_TUS_EXPIRY_HOURS
 * after its creation, finished or not.
 */
export class TusUploads {
  get directory() {
    return mediaConfig.tusDir
  }

  /** The expiry in milliseconds (0: never), read on each use so that it can be changed live. */
  static expiryMs() {
    return Math.max(0, mediaConfig.tusExpiryHours) * 3600_000
  }

  /**
   * Removes every expired upload (its bytes, record and result). Safe to run
   * on every instance at once: removals are idempotent. Answers the ids.
   */
  async removeExpired(now = Date.now()): Promise<string[]> {
    const expiry = TusUploads.expiryMs()
    if (expiry === 0) return []
    const names = await readdir(this.directory).catch(() => [] as string[])
    const removed: string[] = []
    for (const name of names) {
      const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : ''
      if (!UPLOAD_ID.test(id)) continue
      const record = await readFile(join(this.directory, name), 'utf8')
        .then((text) => JSON.parse(text) as { creation_date?: string })
        .catch(() => null)
      const created = Date.parse(record?.creation_date ?? '')
      if (!Number.isFinite(created) || now <= created + expiry) continue
      await this.remove(id)
      removed.push(id)
    }
    return removed
  }

  async remove(id: string) {
    for (const file of [id, `${id}.result.json`, `${id}.json`])
      await rm(join(this.directory, file), { force: true })
  }
}

/**
 * The sesskey an upload's completion needs, kept sealed (encrypted with the
 * app key) in its record: whoever reads MEDIA_TUS_DIR does not get a usable
 * session. Instances sharing the folder share APP_KEY, as sessions require.
 */
export const sealSesskey = (sesskey: string) => encryption.encrypt(sesskey)

export function openSesskey(metadata: Record<string, string | null | undefined>) {
  if (metadata.sealedSesskey) return encryption.decrypt<string>(metadata.sealedSesskey) ?? ''
  // Records written before sealing existed.
  return String(metadata.sesskey ?? '')
}
