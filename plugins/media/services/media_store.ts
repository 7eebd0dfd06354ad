import { createReadStream } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
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

  /**
   * Moves a finished temporary file in. On the fs disk this is a rename (a
   * copy to a side name then a rename across file systems): readers never see
   * half a file, and a 1 GiB upload is not copied. drive's moveFromFs would
   * stream-copy into the final name.
   */
  async putFile(key: string, tmpPath: string) {
    const target = this.localPath(key)
    if (target === null) return this.disk.moveFromFs(tmpPath, key)
    await mkdir(dirname(target), { recursive: true })
    try {
      await rename(tmpPath, target)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
      const partial = `${target}.${randomUUID()}.part`
      try {
        await copyFile(tmpPath, partial)
        await rename(partial, target)
      } finally {
        await rm(partial, { force: true })
      }
      await rm(tmpPath, { force: true })
    }
  }

  async delete(key: string) {
    await this.disk.delete(key)
  }

  /**
   * A second stored file with the same bytes (a copied message's files). On
   * the fs disk a hard link: no bytes copied, and deleting either name leaves
   * the other whole.
   */
  async copy(from: string, to: string) {
    const source = this.localPath(from)
    const target = this.localPath(to)
    if (source === null || target === null) return this.disk.copy(from, to)
    await mkdir(dirname(target), { recursive: true })
    try {
      await link(source, target)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
      const partial = `${target}.${randomUUID()}.part`
      try {
        await copyFile(source, partial)
        await rename(partial, target)
      } finally {
        await rm(partial, { force: true })
      }
    }
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
    if (!range) return this.disk.getStream(key)
    // An S3 disk: only the range is fetched (GetObject with Range).
    const driver = this.disk.driver as { options?: { client?: unknown; bucket?: string } }
    const client = driver.options?.client as { send(command: unknown): Promise<any> } | undefined
    if (client && driver.options?.bucket !== undefined) {
      const { GetObjectCommand } = await import('@aws-sdk/client-s3')
      const answer = await client.send(
        new GetObjectCommand({
          Bucket: driver.options.bucket,
          Key: key,
          Range: `bytes=${range.start}-${range.end}`,
        })
      )
      return answer.Body as Readable
    }
    // Other disks stream from the start; the bytes before the range are skipped.
    const stream = await this.disk.getStream(key)
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
