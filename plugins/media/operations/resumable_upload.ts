import vine from '@vinejs/vine'
import { BaseOperation } from '#core/rpc/base_operation'
import mediaConfig from '../config.js'

const validator = vine.compile(vine.object({}))

/**
 * resumableUpload (spec 4.A.5) as an api.php call: the upload itself is the
 * tus endpoint (plugins/media/README.md); this answers its URL, so a client
 * holding only api.php's address can find it.
 */
export default class ResumableUpload extends BaseOperation {
  static operation = 'resumableUpload'
  /** No area: it names no target; the tus creation checks the target's (MediaService). */
  static area = undefined
  static validator = validator

  async handle() {
    const path = `${mediaConfig.urlPrefix}/upload`
    return {
      upload_url: `${mediaConfig.publicUrl}${path}`,
      upload_path: path,
      maxSize: mediaConfig.maxUploadBytes,
      protocol: 'tus/1.0.0',
    }
  }
}
