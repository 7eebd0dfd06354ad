import { availableParallelism } from 'node:os'
import { isAbsolute, join } from 'node:path'
import env from '#start/env'
import quireConfig, { dataDir } from '#config/quire'

const inData = (path: string | undefined, fallback: string) =>
  !path ? join(dataDir, fallback) : isAbsolute(path) ? path : join(dataDir, path)

/** Settings of the media plugin (env variables listed in README.md). */
const mediaConfig = {
  /** Largest file accepted by fileUpload and resumableUpload (bytes). Default 200 MiB. */
  maxUploadBytes: env.get('MEDIA_MAX_UPLOAD_BYTES', 200 * 1024 * 1024),
  /**
   * Largest image (width x height) decoded for derivatives; read from the
   * header before any decoding, so a decompression bomb is refused unopened.
   * Default 100 megapixels.
   */
  maxPixels: env.get('MEDIA_MAX_PIXELS', 100_000_000),
  /** Origin of the absolute URLs fileUpload answers. */
  publicUrl: (
    env.get('MEDIA_PUBLIC_URL') ?? `http://${env.get('HOST', 'localhost')}:${env.get('PORT', 3333)}`
  ).replace(/\/+$/, ''),
  /** The prefix of the paths this server hands out (covers, URLs): the first environment prefix. */
  urlPrefix: quireConfig.urlPrefixes[0] ?? '/live',
  /** Unfinished resumable uploads (survive a restart). */
  tusDir: inData(env.get('MEDIA_TUS_DIR'), 'tus'),
  /**
   * A resumable upload expires this many hours after its creation (tus
   * `Upload-Expires`; PATCH and HEAD then answer 410) and is removed with its
   * record. 0 keeps unfinished uploads for ever. Default 24.
   */
  tusExpiryHours: env.get('MEDIA_TUS_EXPIRY_HOURS', 24),
  /**
   * Memory for small files the /dbi URLs serve (thumbnails, covers, small
   * originals): at most this many bytes in all, none larger than 256 KiB.
   */
  memoryCacheBytes: env.get('MEDIA_MEMORY_CACHE_MB', 64) * 1024 * 1024,
  memoryCacheLargest: 256 * 1024,
  /**
   * How long an instance trusts a file row it looked up by name (the open
   * /dbi/in URLs). A deletion clears it at once on the instance that made it
   * and, through the hub's channel (Redis), on the others.
   */
  nameCacheMs: env.get('MEDIA_NAME_CACHE_SECONDS', 5) * 1000,
  /**
   * Image derivatives made at once by this process (sharp): a request that
   * would start one more answers 503 with Retry-After. Default: the CPUs, at
   * least 2.
   */
  sharpConcurrency: Math.max(
    1,
    env.get('MEDIA_SHARP_CONCURRENCY') ?? Math.max(2, availableParallelism())
  ),
  /** Longest a derivative may take (sharp's timeout, whole seconds): then 503. Default 20. */
  sharpTimeoutSeconds: Math.max(1, Math.ceil(env.get('MEDIA_SHARP_TIMEOUT_SECONDS', 20))),
  /** Derivative sizes (spec 8): longest side in pixels. `full` is the original. */
  sizes: { norm: 1500, cover: 400, tb: 150 } as Record<string, number>,
}

export default mediaConfig
