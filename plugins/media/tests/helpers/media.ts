import sharp from 'sharp'
import { caller, ok, type makeBook } from '#plugins/tables/tests/helpers/tables'
import { serverUrl } from '#tests/helpers/server'
import { QuireTransport } from '#client/runtime'
import type { Session } from '#tests/helpers/users'

/** Test files made here, never fixtures from elsewhere. */
export const files = {
  jpeg: (width = 800, height = 600) =>
    sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
      .jpeg()
      .toBuffer(),
  png: (width = 300, height = 200) =>
    sharp({
      create: { width, height, channels: 4, background: { r: 200, g: 10, b: 10, alpha: 0.5 } },
    })
      .png()
      .toBuffer(),
  webp: () =>
    sharp({ create: { width: 640, height: 480, channels: 3, background: '#22aa22' } })
      .webp()
      .toBuffer(),
  /** 200x100 pixels stored, EXIF orientation 6: shown 100x200. */
  rotated: () =>
    sharp({ create: { width: 200, height: 100, channels: 3, background: '#aa2222' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer(),
  pdf: () =>
    Buffer.from(
      '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'
    ),
  mp3: () =>
    Buffer.concat([
      Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x0a', 'latin1'),
      Buffer.alloc(4000, 0x55),
    ]),
  mp4: (filler = 20000) =>
    Buffer.concat([
      Buffer.from([0, 0, 0, 0x18]),
      Buffer.from('ftypisom\x00\x00\x02\x00isomiso2', 'latin1'),
      Buffer.alloc(filler, 0x11),
    ]),
}

/** Multipart POST of api.php with the file as part `qqfile` (to this test server, or `origin`). */
export async function upload(
  session: Session | null,
  params: Record<string, unknown>,
  file: { bytes: Buffer; name: string; type?: string } | null,
  req = 'fileUpload',
  origin = serverUrl()
) {
  // Through the typed client's transport (resources/client): one multipart request, part qqfile.
  const client = new QuireTransport({ baseUrl: origin, retries: 0 })
  const fields: Record<string, string> = { req, version: '6.49q/6.49' }
  if (session)
    Object.assign(fields, { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey })
  for (const [key, value] of Object.entries(params)) fields[key] = String(value)
  const answer = await client.send(fields, {
    form: 'multipart',
    file: file ? { data: file.bytes, name: file.name, type: file.type } : undefined,
  })
  return answer.body
}

/** GET (or another method) of a server path, with optional session parameters in the query. */
export async function fetchPath(
  path: string,
  options: {
    session?: Session | null
    method?: string
    headers?: Record<string, string>
    form?: boolean
  } = {},
  origin = serverUrl()
) {
  let url = `${origin}${path}`
  const init: RequestInit = { method: options.method ?? 'GET', headers: options.headers }
  if (options.session) {
    const params = new URLSearchParams({
      o_u: options.session.o_u,
      u_c: options.session.o_u,
      sesskey: options.session.sesskey,
      version: '6.49q/6.49',
    })
    if (options.form) {
      init.method = 'POST'
      init.body = params.toString()
      init.headers = { ...options.headers, 'Content-Type': 'application/x-www-form-urlencoded' }
    } else url += `${url.includes('?') ? '&' : '?'}${params}`
  }
  const response = await fetch(url, init)
  const bytes = Buffer.from(await response.arrayBuffer())
  return { status: response.status, headers: response.headers, bytes }
}

export async function dimensions(bytes: Buffer) {
  const meta = await sharp(bytes).metadata()
  return {
    width: meta.width,
    height: meta.height,
    format: meta.format,
    exif: meta.exif,
    orientation: meta.orientation,
  }
}

/** The errorCode of an api.php answer. */
export async function errorOf(answer: Promise<Record<string, any>>) {
  const body = await answer
  return body.errorCode
}

/** The width of an image. */
export async function widthOf(bytes: Buffer) {
  const meta = await sharp(bytes).metadata()
  return meta.width
}

/** The HTTP status of a path. */
export async function statusAt(
  path: string,
  options: Parameters<typeof fetchPath>[1] = {},
  origin = serverUrl()
) {
  const answer = await fetchPath(path, options, origin)
  return answer.status
}

/** A table of the book with one files field: its catId and fieldId. */
export async function filesTable(book: Awaited<ReturnType<typeof makeBook>>, name = 'Docs') {
  const call = caller(book.session)
  const table = ok(await call('createTable', { b_o: book.b_o, b_c: book.b_c, name, code: 'docs' }))
  const field = ok(
    await call('createField', { b_o: book.b_o, catId: table.catId, name: 'Files', type: 'files' })
  )
  return { catId: Number(table.catId), fieldId: Number(field.fieldId) }
}

/** The value of one file cell, as getTableValueSubset answers it. */
export async function cellValue(
  book: Awaited<ReturnType<typeof makeBook>>,
  catId: number,
  fieldId: number,
  rowId: number
) {
  const subset = ok(
    await caller(book.session)('getTableValueSubset', {
      b_o: book.b_o,
      catId,
      fieldIds: String(fieldId),
      rowIds: String(rowId),
    })
  )
  return subset.tableValues[0][0]
}
