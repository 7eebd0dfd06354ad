import { isAbsolute, join } from 'node:path'
import env from '#start/env'
import { defineConfig, services } from '@adonisjs/drive'
import type { InferDriveDisks } from '@adonisjs/drive/types'
import { dataDir } from '#config/quire'

/**
 * File storage (media plugin). `fs` keeps files under DATA_DIR/media
 * (MEDIA_FS_ROOT to move them); `s3` keeps them in an S3-compatible bucket
 * (MEDIA_S3_*; needs `npm install @aws-sdk/client-s3 @aws-sdk/s3-request-presigner`).
 * Files are never served by drive itself: the media plugin's /dbi URLs check
 * access first.
 */
const fsRoot = (() => {
  const root = env.get('MEDIA_FS_ROOT')
  if (!root) return join(dataDir, 'media')
  return isAbsolute(root) ? root : join(dataDir, root)
})()

const disk = env.get('MEDIA_DISK', 'fs')

/**
 * The S3 client, made here rather than by the driver so that the media
 * plugin can ask for byte ranges (GetObject with Range: a seek in a video
 * reads only what it plays). Only when chosen: the AWS SDK is an optional
 * install.
 */
const s3Sdk = disk === 's3' ? await import('@aws-sdk/client-s3') : null
const s3Client = s3Sdk
  ? new s3Sdk.S3Client({
      credentials: {
        accessKeyId: env.get('MEDIA_S3_KEY', ''),
        secretAccessKey: env.get('MEDIA_S3_SECRET', ''),
      },
      region: env.get('MEDIA_S3_REGION', 'us-east-1'),
      endpoint: env.get('MEDIA_S3_ENDPOINT'),
      forcePathStyle: env.get('MEDIA_S3_PATH_STYLE', true),
      // Checksums only where S3 requires them: newer SDKs otherwise send every upload
      // aws-chunked with a trailing checksum, which S3-compatible stores that do not
      // decode that encoding (s3rver, older MinIO) keep as part of the file's bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
  : null

const driveConfig = defineConfig({
  default: disk,
  services: {
    fs: services.fs({ location: fsRoot, serveFiles: false, visibility: 'private' }),
    // Only configured when chosen: its driver needs the AWS SDK, an optional install.
    ...(s3Client
      ? {
          s3: services.s3({
            client: s3Client,
            bucket: env.get('MEDIA_S3_BUCKET', ''),
            visibility: 'private',
          }),
        }
      : {}),
  },
})

export default driveConfig

declare module '@adonisjs/drive/types' {
  export interface DriveDisks extends InferDriveDisks<typeof driveConfig> {}
}
