import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Readable } from 'node:stream'
import drive from '@adonisjs/drive/services/main'
import { FSDriver } from 'flydrive/drivers/fs'

export interface StoredStat {
  size: number
  lastModified: Date
}

/**
 * The drive disk (config/drive.ts) as the media plugin uses it. Keys are
 * server-made (`files/<ab>/<internName>`, `derived/<size>/<ab>/<name>`); on the
 * `fs` disk files are read straight from their path, so ranges cost a seek.
 */
export class MediaStore {
  private get disk() {
    return drive.use()
  }

  /** The disk's folder when it is the local `fs` disk (null for S3). */
  private fsRoot(): string | null {
    const driver = this.disk.driver
    if (!(driver instanceof FSDriver)) return null
    const location = (driver as any).options.location as string | URL
    return typeof location === 'string' ? location : fileURLToPath(location)
  }

  /** A local path of the key, on the fs disk. */
  localPath(key: string): string | null {
    const root = this.fsRoot()
    return root === null ? null : join(root, key)
  }

  /** Moves a finished temporary file in (a rename on the fs disk: never half-written). */
  async putFile(key: string, tmpPath: string) {
    await this.disk.moveFromFs(tmpPath, key)
  }

  async delete(key: string) {
    await this.disk.delete(key)
  }

  async stat(key: string): Promise<StoredStat | null> {
    const path = this.localPath(key)
    try {
      if (path !== null) {
        const info = await stat(path)
        return { size: info.size, lastModified: info.mtime }
      }
      const meta = await this.disk.getMetaData(key)
      return { size: meta.contentLength, lastModified: meta.lastModified }
    } catch {
      return null
    }
  }

  /** A stream of the file, or of bytes start..end (inclusive). */
  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const path = this.localPath(key)
    if (path !== null) return createReadStream(path, range)
    const stream = await this.disk.getStream(key)
    if (!range) return stream
    // Other disks stream from the start; the bytes before the range are skipped.
    const { Transform } = await import('node:stream')
    let offset = 0
    return stream.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          const from = Math.max(range.start - offset, 0)
          const to = Math.min(range.end + 1 - offset, chunk.length)
          offset += chunk.length
          done(null, from < to ? chunk.subarray(from, to) : undefined)
        },
      })
    )
  }

  /** The whole file (remote disks only: on the fs disk sharp reads the path). */
  async bytes(key: string): Promise<Buffer> {
    return Buffer.from(await this.disk.getBytes(key))
  }
}
