import { open } from 'node:fs/promises'

export type MediaKind = 'image' | 'audio' | 'video' | 'doc'

export interface Sniffed {
  kind: MediaKind
  mime: string
  /** The extension the content calls for; null when the content is not recognised. */
  ext: string | null
}

const ascii = (bytes: Buffer, at: number, text: string) =>
  bytes.length >= at + text.length && bytes.toString('latin1', at, at + text.length) === text

/** Extensions the sniffer recognises by content: a name alone never earns one. */
const KNOWN_EXTS = new Set([
  'jpg',
  'jpeg',
  'png',
  'gif',
  'webp',
  'tif',
  'tiff',
  'avif',
  'heic',
  'wav',
  'avi',
  'm4a',
  'mov',
  '3gp',
  'mp4',
  'webm',
  'ogg',
  'flac',
  'mp3',
  'pdf',
  'svg',
  'html',
  'htm',
  'js',
])

/** Images sharp decodes here (derivatives are made of these only). */
const IMAGE_EXTS = new Set(['jpg', 'png', 'webp', 'gif', 'tif', 'avif'])

/**
 * What a file is, from its first bytes: never from its name or the MIME type
 * a client sent. Unknown content is a document served as
 * application/octet-stream.
 */
export function sniffBytes(bytes: Buffer): Sniffed {
  const b = bytes
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { kind: 'image', mime: 'image/jpeg', ext: 'jpg' }
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n')) return { kind: 'image', mime: 'image/png', ext: 'png' }
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'))
    return { kind: 'image', mime: 'image/gif', ext: 'gif' }
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP'))
    return { kind: 'image', mime: 'image/webp', ext: 'webp' }
  if (ascii(b, 0, 'II*\x00') || ascii(b, 0, 'MM\x00*'))
    return { kind: 'image', mime: 'image/tiff', ext: 'tif' }
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE'))
    return { kind: 'audio', mime: 'audio/wav', ext: 'wav' }
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'AVI '))
    return { kind: 'video', mime: 'video/x-msvideo', ext: 'avi' }
  if (ascii(b, 4, 'ftyp')) {
    const brand = b.toString('latin1', 8, 12)
    if (brand === 'avif' || brand === 'avis')
      return { kind: 'image', mime: 'image/avif', ext: 'avif' }
    if (brand.startsWith('hei') || brand === 'mif1')
      return { kind: 'doc', mime: 'image/heic', ext: 'heic' }
    if (brand.startsWith('M4A') || brand.startsWith('M4B'))
      return { kind: 'audio', mime: 'audio/mp4', ext: 'm4a' }
    if (brand.startsWith('qt')) return { kind: 'video', mime: 'video/quicktime', ext: 'mov' }
    if (brand.startsWith('3gp')) return { kind: 'video', mime: 'video/3gpp', ext: '3gp' }
    return { kind: 'video', mime: 'video/mp4', ext: 'mp4' }
  }
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3)
    return { kind: 'video', mime: 'video/webm', ext: 'webm' }
  if (ascii(b, 0, 'OggS')) return { kind: 'audio', mime: 'audio/ogg', ext: 'ogg' }
  if (ascii(b, 0, 'fLaC')) return { kind: 'audio', mime: 'audio/flac', ext: 'flac' }
  if (ascii(b, 0, 'ID3')) return { kind: 'audio', mime: 'audio/mpeg', ext: 'mp3' }
  // An MPEG audio frame header: 11 sync bits, then not the reserved version/layer.
  if (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x06) !== 0)
    return { kind: 'audio', mime: 'audio/mpeg', ext: 'mp3' }
  if (ascii(b, 0, '%PDF-')) return { kind: 'doc', mime: 'application/pdf', ext: 'pdf' }
  if (ascii(b, 0, 'PK\x03\x04')) return { kind: 'doc', mime: 'application/zip', ext: null }
  if (b.length >= 8 && b.readUInt32BE(0) === 0xd0cf11e0)
    return { kind: 'doc', mime: 'application/x-ole-storage', ext: null }
  return { kind: 'doc', mime: 'application/octet-stream', ext: null }
}

/** Sniffs a file on disk (reads its first 64 bytes). */
export async function sniffFile(path: string): Promise<Sniffed> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(64)
    const { bytesRead } = await handle.read(buffer, 0, 64, 0)
    return sniffBytes(buffer.subarray(0, bytesRead))
  } finally {
    await handle.close()
  }
}

/** Office formats are zip or OLE containers: their extension comes from the name, when it fits. */
const CONTAINER_EXTS: Record<string, string[]> = {
  'application/zip': ['zip', 'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub', 'jar', 'apk'],
  'application/x-ole-storage': ['doc', 'xls', 'ppt', 'msg'],
}

const MIME_OF_EXT: Record<string, string> = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  zip: 'application/zip',
}

/** The extension of a client file name: lower-case letters and digits only, else null. */
export function extOfName(name: string): string | null {
  const match = /\.([A-Za-z0-9]{1,10})$/.exec(name.trim())
  return match ? match[1].toLowerCase() : null
}

/**
 * The stored identity of an upload: kind and MIME from the content; the
 * extension from the content, or for unrecognised content from the client's
 * name (documents only: the content type stays application/octet-stream, so
 * a name can never make the server serve HTML or script).
 */
export function identify(sniffed: Sniffed, originName: string) {
  const nameExt = extOfName(originName)
  if (sniffed.ext) return { ...sniffed, ext: sniffed.ext }
  const allowed = CONTAINER_EXTS[sniffed.mime]
  if (allowed) {
    const ext = nameExt && allowed.includes(nameExt) ? nameExt : allowed[0]
    return { kind: sniffed.kind, mime: MIME_OF_EXT[ext] ?? sniffed.mime, ext }
  }
  // A name may not claim a type its content is not (x.jpg holding HTML stays a .bin document).
  const claimsKnownType = nameExt !== null && KNOWN_EXTS.has(nameExt)
  return {
    kind: sniffed.kind,
    mime: sniffed.mime,
    ext: nameExt && !claimsKnownType ? nameExt : 'bin',
  }
}

export const isDecodableImage = (ext: string) => IMAGE_EXTS.has(ext)
