import mediaConfig from '../config.js'
import { isOpenUuid } from '../lib/client_uuid.js'
import type { StoredUpload } from '../services/media_files.js'

/** Wire `type` (2.5, 2.11): 'doc' for documents, 'media' for images, audio and video. */
export const wireType = (kind: string) => (kind === 'doc' ? 'doc' : 'media')

/** The file name segment of a URL: the client's name, reduced to safe characters. */
export function urlName(file: { origin_name: string; ext: string }) {
  const cleaned = file.origin_name
    .replace(/[^\w.\- ]+/g, '')
    .trim()
    .replace(/\s+/g, '_')
  return cleaned === '' ? `file.${file.ext}` : cleaned.slice(0, 100)
}

/**
 * fileUpload's answer (and a resumable upload's result): every field of 2.11
 * and of client-facts' cell upload answer, with the absolute URLs of the open
 * forms (MEDIA_PUBLIC_URL, never a request's headers).
 */
export function serializeUpload(
  stored: StoredUpload,
  id: number,
  where: {
    smid?: number
    rowId?: number
    fieldId?: number
    mdc: number
    book: { b_o: string; b_c: string }
    sstamp: number
  }
) {
  const name = urlName({ origin_name: stored.originName, ext: stored.ext })
  const base = `${mediaConfig.publicUrl}${mediaConfig.urlPrefix}/dbi/in`
  // The open URLs need an unguessable key: a client's non-random uuid is not one.
  const key = isOpenUuid(stored.uuid) ? stored.uuid : stored.internName
  return {
    success: true,
    smid: where.smid ?? 0,
    rowId: where.rowId ?? 0,
    fieldId: where.fieldId ?? 0,
    row_id: where.rowId ?? 0,
    field_id: where.fieldId ?? 0,
    b_o: where.book.b_o,
    b_c: where.book.b_c,
    uuid: stored.uuid,
    id,
    type: wireType(stored.kind),
    mdc: where.mdc,
    ext: stored.ext,
    originName: stored.originName,
    internName: stored.internName,
    name: stored.originName,
    filesize: stored.size,
    filetype: stored.mime,
    url: `${base}/full/${key}/${name}`,
    gallery: `${base}/norm/${key}/${name}`,
    preview: `${base}/_tb/${key}/${name}`,
    sstamp: where.sstamp,
  }
}
