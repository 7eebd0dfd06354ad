import { randomUUID } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inject } from '@adonisjs/core'
import sharp from 'sharp'
import mediaConfig from '../config.js'
import { Gate } from '../lib/gate.js'
import { isDecodableImage } from '../lib/sniff.js'
import { MediaStore } from './media_store.js'

/** The shipped icons (plugins/media/assets/icons): a document's tb, the default profile image. */
export const ICONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', 'icons')

const ICON_OF_EXT: Record<string, string> = {
  'pdf': 'pdf',
  'doc': 'doc',
  'docx': 'doc',
  'odt': 'doc',
  'rtf': 'doc',
  'xls': 'xls',
  'xlsx': 'xls',
  'ods': 'xls',
  'csv': 'xls',
  'ppt': 'ppt',
  'pptx': 'ppt',
  'odp': 'ppt',
  'zip': 'zip',
  'rar': 'zip',
  '7z': 'zip',
  'gz': 'zip',
  'tar': 'zip',
  'txt': 'txt',
  'md': 'txt',
  'log': 'txt',
  'json': 'txt',
  'xml': 'txt',
}

/** The icon file of a stored file's tb when it is not a decodable image. */
export function iconOf(file: { kind: string; ext: string }) {
  const name =
    file.kind === 'audio' || file.kind === 'video'
      ? file.kind
      : file.kind === 'image'
        ? 'image'
        : (ICON_OF_EXT[file.ext] ?? 'file')
  return join(ICONS_DIR, `${name}.png`)
}

export class ImageTooLargeError extends Error {}
export class CorruptImageError extends Error {}
/** MEDIA_SHARP_CONCURRENCY derivatives are being made, or one took MEDIA_SHARP_TIMEOUT_SECONDS: try later. */
export class DerivativesBusyError extends Error {}

// Each derivative is made once and kept on the disk: libvips' operation cache would only hold
// decoded images in memory after their request (a 10000x10000 RGBA image left 90 MiB behind).
sharp.cache(false)

/** Output format of a derivative: the source's where it has one, JPEG otherwise (GIF keeps alpha as PNG). */
function outputOf(ext: string): { ext: string; mime: string } {
  if (ext === 'png' || ext === 'gif') return { ext: 'png', mime: 'image/png' }
  if (ext === 'webp') return { ext: 'webp', mime: 'image/webp' }
  return { ext: 'jpg', mime: 'image/jpeg' }
}

/**
 * Image sizes (spec 8): norm 1500 px, cover 400 px, tb 150 px (longest side,
 * never enlarged), full = the original untouched. Each derivative is made
 * once, EXIF orientation applied and metadata stripped, and kept on the disk
 * next to the originals; concurrent first requests share one generation.
 */
@inject()
export class DerivativeService {
  private inflight = new Map<string, Promise<void>>()
  /** At most MEDIA_SHARP_CONCURRENCY derivatives made at once, no queue (503 past it). */
  private gate = new Gate(mediaConfig.sharpConcurrency)
  /** Derivatives known to exist (a cached request then skips the disk check). */
  private known = new Map<string, true>()

  constructor(private store: MediaStore) {}

  /**
   * Checks an image's header (no decoding): its pixel count against
   * MEDIA_MAX_PIXELS, so a decompression bomb is refused before decoding.
   */
  async probe(input: string | Buffer) {
    let meta: sharp.Metadata
    try {
      meta = await sharp(input, { limitInputPixels: false }).metadata()
    } catch {
      throw new CorruptImageError('The image cannot be read')
    }
    const width = meta.width ?? 0
    const height = meta.height ?? 0
    if (!width || !height) throw new CorruptImageError('The image has no dimensions')
    if (width * height * (meta.pages ?? 1) > mediaConfig.maxPixels)
      throw new ImageTooLargeError(
        `The image has ${width}x${height} pixels; at most ${mediaConfig.maxPixels} are accepted`
      )
    // EXIF orientations 5-8 swap the displayed width and height.
    const swapped = (meta.orientation ?? 1) >= 5
    return { width: swapped ? height : width, height: swapped ? width : height }
  }

  /** The keys every derivative of a file would have (made or not). */
  keysOf(file: { intern_name: string; ext: string }) {
    if (!isDecodableImage(file.ext)) return []
    const output = outputOf(file.ext)
    const base = file.intern_name.replace(/\.[^.]*$/, '')
    return Object.keys(mediaConfig.sizes).map(
      (size) => `derived/${size}/${base.slice(0, 2)}/${base}.${output.ext}`
    )
  }

  /** Forgets derivatives removed from the disk (a deleted file's). */
  forget(keys: string[]) {
    for (const key of keys) this.known.delete(key)
  }

  /** The storage key and MIME type of `size` of an image (made on first use). */
  async derivative(
    file: { intern_name: string; storage_key: string; ext: string },
    size: string
  ): Promise<{ key: string; mime: string }> {
    const pixels = mediaConfig.sizes[size]
    if (!pixels || !isDecodableImage(file.ext)) throw new Error(`No ${size} derivative`)
    const output = outputOf(file.ext)
    const base = file.intern_name.replace(/\.[^.]*$/, '')
    const key = `derived/${size}/${base.slice(0, 2)}/${base}.${output.ext}`
    if (this.known.has(key)) return { key, mime: output.mime }
    let pending = this.inflight.get(key)
    if (!pending) {
      // A request for one being made waits for it; one more would exceed the bound.
      const leave = this.gate.tryEnter()
      if (!leave) throw new DerivativesBusyError('Image derivatives are busy')
      pending = this.make(file.storage_key, key, pixels, output.ext).finally(() => {
        leave()
        this.inflight.delete(key)
      })
      this.inflight.set(key, pending)
    }
    await pending
    if (this.known.size > 100_000) this.known.clear()
    this.known.set(key, true)
    return { key, mime: output.mime }
  }

  private async make(sourceKey: string, key: string, pixels: number, ext: string) {
    // Another instance sharing the disk (or an earlier run) may have made it.
    if (await this.store.stat(key)) return
    const input = this.store.localPath(sourceKey) ?? (await this.store.bytes(sourceKey))
    await this.probe(input)
    // Made next to its final place on the fs disk (then renamed in), in the temp folder otherwise.
    const local = this.store.localPath(key)
    const dir = local ? dirname(local) : join(tmpdir(), 'quire-media')
    await mkdir(dir, { recursive: true })
    const tmp = join(dir, `.${randomUUID()}.${ext}`)
    try {
      let pipeline = sharp(input, { limitInputPixels: mediaConfig.maxPixels, failOn: 'error' })
        .timeout({ seconds: mediaConfig.sharpTimeoutSeconds })
        .rotate()
        .resize({ width: pixels, height: pixels, fit: 'inside', withoutEnlargement: true })
      pipeline =
        ext === 'png'
          ? pipeline.png()
          : ext === 'webp'
            ? pipeline.webp({ quality: 80 })
            : pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: 82 })
      try {
        await pipeline.toFile(tmp)
      } catch (error) {
        const message = (error as Error).message
        if (/timeout/i.test(message))
          throw new DerivativesBusyError(`The derivative took too long: ${message}`)
        throw new CorruptImageError(`The image cannot be decoded: ${message}`)
      }
      // A rename into place on the fs disk: a reader never sees half a file.
      await this.store.putFile(key, tmp)
    } finally {
      await rm(tmp, { force: true })
    }
  }
}
