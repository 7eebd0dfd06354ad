import { request } from 'node:http'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import mediaConfig from '#plugins/media/config'
import { TusUploads } from '#plugins/media/services/tus_uploads'
import { startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { serverUrl } from '#tests/helpers/server'
import type { Session } from '#tests/helpers/users'
import { fetchPath, files, widthOf } from '../helpers/media.js'

/** One field of an awaited answer. */
async function field<T, K extends keyof T>(answer: Promise<T>, key: K): Promise<T[K]> {
  const value = await answer
  return value[key]
}

const TUS = { 'Tus-Resumable': '1.0.0' }

const metadataHeader = (metadata: Record<string, string | number>) =>
  Object.entries(metadata)
    .map(([key, value]) => `${key} ${Buffer.from(String(value)).toString('base64')}`)
    .join(',')

async function create(base: string, size: number, metadata: Record<string, string | number>) {
  const response = await fetch(`${base}/live/upload`, {
    method: 'POST',
    headers: { ...TUS, 'Upload-Length': String(size), 'Upload-Metadata': metadataHeader(metadata) },
  })
  return { status: response.status, location: response.headers.get('location') }
}

async function patch(url: string, offset: number, bytes: Buffer) {
  const response = await fetch(url, {
    method: 'PATCH',
    headers: {
      ...TUS,
      'Upload-Offset': String(offset),
      'Content-Type': 'application/offset+octet-stream',
    },
    body: bytes,
  })
  return { status: response.status, offset: Number(response.headers.get('upload-offset')) }
}

async function offsetOf(url: string) {
  const response = await fetch(url, { method: 'HEAD', headers: TUS })
  return { status: response.status, offset: Number(response.headers.get('upload-offset')) }
}

/** A PATCH that dies after `sent` bytes: the connection is cut, as a lost network would. */
function interruptedPatch(url: string, bytes: Buffer, sent: number) {
  return new Promise<void>((resolve) => {
    const req = request(url, {
      method: 'PATCH',
      headers: {
        ...TUS,
        'Upload-Offset': '0',
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(bytes.length),
      },
    })
    req.on('error', () => resolve())
    req.on('response', () => resolve())
    req.write(bytes.subarray(0, sent), () => setTimeout(() => req.destroy(), 300))
  })
}

async function uploadMeta(base: string, location: string, session: Session) {
  const id = location.replace(/^.*\//, '')
  const query = new URLSearchParams({ o_u: session.o_u, sesskey: session.sesskey })
  const response = await fetch(`${base}/live/upload/upload_meta/${id}?${query}`)
  return {
    status: response.status,
    body: (response.status === 200 ? await response.json() : {}) as Record<string, any>,
  }
}

async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const smid = ok(await call('sendMsg', { ...base, msg: 'tus' })).createMessageId as number
  const meta = {
    ...base,
    smid,
    o_u: book.session.o_u,
    u_c: book.session.o_u,
    sesskey: book.session.sesskey,
    version: '6.49q/6.49',
  }
  return { book, call, base, smid, meta }
}

test.group('resumableUpload (tus)', () => {
  test('creation, PATCH in chunks, HEAD offset, completion attaches, upload_meta', async ({
    assert,
  }) => {
    const { book, call, base, smid, meta } = await fixture()
    const bytes = await files.jpeg(1600, 1200)
    const created = await create(serverUrl(), bytes.length, {
      ...meta,
      filename: 'big photo.jpg',
      filetype: 'image/jpeg',
    })
    assert.equal(created.status, 201)
    assert.match(created.location!, /\/live\/upload\/[0-9a-f]{32}$/)
    const url = created.location!
    const half = Math.floor(bytes.length / 2)
    assert.deepEqual(await patch(url, 0, bytes.subarray(0, half)), { status: 204, offset: half })
    assert.deepEqual(await offsetOf(url), { status: 200, offset: half })
    const pending = await uploadMeta(serverUrl(), url, book.session)
    assert.equal(pending.body.status, 'uploading')
    assert.equal(pending.body.offset, half)
    const done = await patch(url, half, bytes.subarray(half))
    assert.equal(done.status, 204)
    assert.equal(done.offset, bytes.length)

    const meta2 = await uploadMeta(serverUrl(), url, book.session)
    assert.equal(meta2.status, 200)
    const answer = meta2.body
    assert.isTrue(answer.success)
    assert.equal(answer.status, 'ok')
    assert.equal(answer.smid, smid)
    assert.equal(answer.type, 'media')
    assert.equal(answer.ext, 'jpg')
    assert.equal(answer.originName, 'big photo.jpg')
    assert.equal(answer.filesize, bytes.length)
    assert.equal(answer.filetype, 'image/jpeg')
    assert.equal(answer.b_o, book.b_o)
    assert.equal(answer.o_u, book.session.o_u)
    for (const key of ['id', 'mdc', 'internName', 'uuid', 'sstamp', 'version', 'u_c', 'b_c'])
      assert.property(answer, key)
    const message = ok(await call('getBookMessages', base)).bookMessages.find(
      (m: any) => m.smid === smid
    )
    assert.equal(message.medias[0].uuid, answer.uuid)
    const tb = await fetchPath(`/live/dbi/in/tb/${answer.uuid}`)
    assert.equal(await widthOf(tb.bytes), 150)

    // upload_meta is the uploader's only.
    const stranger = await makeBook()
    assert.equal(await field(uploadMeta(serverUrl(), url, stranger.session), 'status'), 404)
  })

  test('creation checks the session and the target before accepting a byte', async ({ assert }) => {
    const { meta } = await fixture()
    const stranger = await makeBook()
    assert.equal(await field(create(serverUrl(), 10, { ...meta, sesskey: 'nope' }), 'status'), 403)
    const foreign = {
      ...meta,
      o_u: stranger.session.o_u,
      u_c: stranger.session.o_u,
      sesskey: stranger.session.sesskey,
    }
    assert.equal(await field(create(serverUrl(), 10, foreign), 'status'), 404)
    assert.equal(await field(create(serverUrl(), 10, { ...meta, smid: '' }), 'status'), 400)
    const tooBig = await create(serverUrl(), 10 * 1024 * 1024 * 1024, meta)
    assert.equal(tooBig.status, 413)
  })

  test('an interrupted PATCH resumes from the stored offset', async ({ assert }) => {
    const { book, meta } = await fixture()
    const bytes = files.pdf()
    const padded = Buffer.concat([bytes, Buffer.alloc(300_000, 0x20)])
    const { location } = await create(serverUrl(), padded.length, { ...meta, filename: 'r.pdf' })
    await interruptedPatch(location!, padded, 100_000)
    const { offset } = await offsetOf(location!)
    assert.isAbove(offset, 0)
    assert.isAtMost(offset, 100_000)
    const done = await patch(location!, offset, padded.subarray(offset))
    assert.equal(done.offset, padded.length)
    const answer = await field(uploadMeta(serverUrl(), location!, book.session), 'body')
    assert.equal(answer.type, 'doc')
    assert.equal(answer.ext, 'pdf')
    const file = await fetchPath(`/live/dbi/odn/full/${answer.uuid}`)
    assert.deepEqual(file.bytes, padded)
  })

  test('an upload survives a server restart (another instance sharing the disk finishes it)', async ({
    assert,
    cleanup,
  }) => {
    const { book, meta } = await fixture()
    const bytes = await files.png(500, 400)
    let server: QuireProcess | null = await startQuire({ ...process.env, LOG_LEVEL: 'warn' })
    cleanup(() => server?.stop())
    const { location } = await create(server.url, bytes.length, { ...meta, filename: 'p.png' })
    const half = 1000
    await patch(location!, 0, bytes.subarray(0, half))
    await server.stop()
    server = await startQuire({ ...process.env, LOG_LEVEL: 'warn' })
    const resumed = location!.replace(/^http:\/\/[^/]+/, server.url)
    assert.deepEqual(await offsetOf(resumed), { status: 200, offset: half })
    assert.equal(await field(patch(resumed, half, bytes.subarray(half)), 'offset'), bytes.length)
    await server.stop()
    server = null
    const answer = await field(uploadMeta(serverUrl(), location!, book.session), 'body')
    assert.isTrue(answer.success)
    assert.equal(answer.ext, 'png')
    const full = await fetchPath(`/live/dbi/in/full/${answer.uuid}`)
    assert.deepEqual(full.bytes, bytes)
  }).timeout(180_000)
})

const idOf = (location: string) => location.replace(/^.*\//, '')
const recordPath = (location: string) => join(mediaConfig.tusDir, `${idOf(location)}.json`)
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false
  )

/** Moves an upload's creation back in time, as if it had been made `seconds` ago. */
async function age(location: string, seconds: number) {
  const record = JSON.parse(await readFile(recordPath(location), 'utf8'))
  record.creation_date = new Date(Date.now() - seconds * 1000).toISOString()
  await writeFile(recordPath(location), JSON.stringify(record))
}

test.group('resumableUpload expiry (MEDIA_TUS_EXPIRY_HOURS)', (group) => {
  let saved: number
  group.each.setup(() => {
    saved = mediaConfig.tusExpiryHours
    return () => {
      mediaConfig.tusExpiryHours = saved
    }
  })

  test('creation announces Upload-Expires, 24 hours by default; the record holds no sesskey', async ({
    assert,
  }) => {
    const { book, meta } = await fixture()
    const before = Date.now()
    const response = await fetch(`${serverUrl()}/live/upload`, {
      method: 'POST',
      headers: { ...TUS, 'Upload-Length': '10', 'Upload-Metadata': metadataHeader(meta) },
    })
    assert.equal(response.status, 201)
    const expires = Date.parse(response.headers.get('upload-expires') ?? '')
    // The header has whole seconds.
    assert.isAtLeast(expires, Math.floor(before / 1000) * 1000 + 24 * 3600_000 - 1000)
    assert.isAtMost(expires, Date.now() + 24 * 3600_000)
    const record = await readFile(recordPath(response.headers.get('location')!), 'utf8')
    assert.notInclude(record, book.session.sesskey)
    assert.notProperty(JSON.parse(record).metadata, 'sesskey')
  })

  test('an expired upload is refused (410) and removed; a recent one goes on', async ({
    assert,
  }) => {
    const { book, meta } = await fixture()
    mediaConfig.tusExpiryHours = 1
    const bytes = files.pdf()
    const old = await create(serverUrl(), bytes.length, { ...meta, filename: 'old.pdf' })
    const recent = await create(serverUrl(), bytes.length, { ...meta, filename: 'new.pdf' })
    const finished = await create(serverUrl(), bytes.length, { ...meta, filename: 'done.pdf' })
    assert.equal(await field(patch(old.location!, 0, bytes.subarray(0, 10)), 'status'), 204)
    assert.equal(await field(patch(finished.location!, 0, bytes), 'status'), 204)
    for (const upload of [old, finished]) await age(upload.location!, 2 * 3600)

    assert.equal(await field(offsetOf(old.location!), 'status'), 410)
    assert.equal(await field(patch(old.location!, 10, bytes.subarray(10)), 'status'), 410)

    const uploads = await app.container.make(TusUploads)
    const removed = await uploads.removeExpired()
    // (Uploads of earlier runs sharing the folder may go too.)
    assert.includeMembers(removed, [idOf(old.location!), idOf(finished.location!)])
    assert.notInclude(removed, idOf(recent.location!))
    assert.isFalse(await exists(recordPath(old.location!)))
    assert.isFalse(await exists(join(mediaConfig.tusDir, idOf(old.location!))))
    assert.isFalse(await exists(recordPath(finished.location!)))
    assert.isFalse(
      await exists(join(mediaConfig.tusDir, `${idOf(finished.location!)}.result.json`))
    )
    assert.equal(await field(offsetOf(old.location!), 'status'), 404)
    assert.equal(
      await field(uploadMeta(serverUrl(), finished.location!, book.session), 'status'),
      404
    )

    // The recent one was left alone and completes.
    assert.equal(await field(patch(recent.location!, 0, bytes), 'status'), 204)
    const answer = await field(uploadMeta(serverUrl(), recent.location!, book.session), 'body')
    assert.isTrue(answer.success)
    assert.equal(answer.originName, 'new.pdf')
  })

  test('MEDIA_TUS_EXPIRY_HOURS=0 keeps uploads for ever', async ({ assert }) => {
    const { meta } = await fixture()
    mediaConfig.tusExpiryHours = 0
    const upload = await create(serverUrl(), 10, meta)
    await age(upload.location!, 400 * 24 * 3600)
    assert.equal(await field(offsetOf(upload.location!), 'status'), 200)
    const uploads = await app.container.make(TusUploads)
    assert.notInclude(await uploads.removeExpired(), idOf(upload.location!))
  })
})

test.group('resumableUpload (api.php)', () => {
  test('answers the tus upload URL', async ({ assert }) => {
    const { book } = await fixture()
    const answer = await caller(book.session)('resumableUpload')
    assert.equal(answer.status, 'ok')
    assert.equal(answer.upload_path, '/live/upload')
    assert.match(answer.upload_url, /^https?:\/\/.+\/live\/upload$/)
    assert.equal(answer.protocol, 'tus/1.0.0')
  })
})

/** The headers of a tus request to `url`. */
async function tusHeaders(url: string, init: RequestInit) {
  const response = await fetch(url, { ...init, headers: { ...TUS, ...init.headers } })
  await response.arrayBuffer()
  return { status: response.status, headers: response.headers }
}

test.group('resumableUpload (tus): answer headers', () => {
  test('every upload answer carries the sandbox Content-Security-Policy', async ({ assert }) => {
    const { book, meta } = await fixture()
    const bytes = files.pdf()
    const creation = await tusHeaders(`${serverUrl()}/live/upload`, {
      method: 'POST',
      headers: { 'Upload-Length': String(bytes.length), 'Upload-Metadata': metadataHeader(meta) },
    })
    const url = creation.headers.get('location')!
    const answers = [
      creation,
      await tusHeaders(url, { method: 'HEAD' }),
      await tusHeaders(url, {
        method: 'PATCH',
        headers: { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
        body: bytes,
      }),
      await tusHeaders(`${serverUrl()}/live/upload`, {
        method: 'POST',
        headers: { 'Upload-Length': '5', 'Upload-Metadata': metadataHeader({ o_u: 'nobody' }) },
      }),
    ]
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [201, 200, 204, 403]
    )
    const id = url.replace(/^.*\//, '')
    const query = new URLSearchParams({ o_u: book.session.o_u, sesskey: book.session.sesskey })
    const meta2 = await fetch(`${serverUrl()}/live/upload/upload_meta/${id}?${query}`)
    await meta2.arrayBuffer()
    for (const headers of [...answers.map((answer) => answer.headers), meta2.headers]) {
      const policy = headers.get('content-security-policy') ?? ''
      assert.match(policy, /^sandbox; default-src 'none'/)
      assert.notMatch(policy, /allow-scripts|script-src|unsafe-eval/)
    }
  })
})

test.group('resumableUpload (tus): the Location', (group) => {
  /** A creation whose client claims another host through every forwarded header. */
  const forged = async (base: string, meta: Record<string, string | number>) =>
    tusHeaders(`${base}/live/upload`, {
      method: 'POST',
      headers: {
        'Upload-Length': '10',
        'Upload-Metadata': metadataHeader(meta),
        'X-Forwarded-Host': 'evil.example',
        'X-Forwarded-Proto': 'https',
        'Forwarded': 'host=evil.example;proto=https',
      },
    })

  let direct: QuireProcess | null = null
  group.teardown(async () => {
    await direct?.stop()
  })

  test('forwarded headers are ignored unless the peer is a trusted proxy', async ({ assert }) => {
    const { meta } = await fixture()
    // A server trusting no proxy (TRUSTED_PROXIES unset in production; the suite's own server
    // trusts loopback, .env.test, since tests send client addresses in X-Forwarded-For).
    direct = await startQuire({ ...process.env, LOG_LEVEL: 'warn', TRUSTED_PROXIES: 'none' })
    const refused = await forged(direct.url, meta)
    assert.equal(refused.status, 201)
    const location = new URL(refused.headers.get('location')!)
    assert.equal(location.host, new URL(direct.url).host)
    assert.equal(location.protocol, 'http:')
    assert.match(location.pathname, /^\/live\/upload\/[0-9a-f]{32}$/)
    // Control: the suite's server, told to trust loopback, believes its proxy.
    const behind = await forged(serverUrl(), meta)
    assert.equal(behind.status, 201)
    assert.match(behind.headers.get('location')!, /^https:\/\/evil\.example\/live\/upload\//)
  })
})

test.group('resumableUpload (tus): PATCH content type', () => {
  test('a PATCH of another Content-Type answers 415 and appends nothing', async ({ assert }) => {
    const { meta } = await fixture()
    const bytes = files.pdf()
    const { location } = await create(serverUrl(), bytes.length, meta)
    for (const type of ['application/octet-stream', 'text/plain', undefined]) {
      const refused = await tusHeaders(location!, {
        method: 'PATCH',
        headers: { 'Upload-Offset': '0', ...(type ? { 'Content-Type': type } : {}) },
        body: bytes,
      })
      assert.equal(refused.status, 415, String(type))
      assert.equal(refused.headers.get('tus-resumable'), '1.0.0')
    }
    assert.deepEqual(await offsetOf(location!), { status: 200, offset: 0 })
    assert.equal(await field(patch(location!, 0, bytes), 'status'), 204)
  })
})
