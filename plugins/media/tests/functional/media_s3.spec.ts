import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import S3rver from 's3rver'
import { Disk } from 'flydrive'
import { S3Driver } from 'flydrive/drivers/s3'
import { startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'
import { caller, eventually, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { files, upload, widthOf } from '../helpers/media.js'

const BUCKET = 'quire-media'
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
const TUS = { 'Tus-Resumable': '1.0.0' }

/**
 * The `s3` disk against a real S3-speaking server on loopback (s3rver, an npm
 * package: no binary downloaded): a Quire process started with MEDIA_DISK=s3
 * stores, serves (with ranges), derives and deletes files in the bucket.
 */
test.group('the s3 disk (MEDIA_DISK=s3, against s3rver)', (group) => {
  let s3: S3rver
  let quire: QuireProcess
  let bucket: Disk
  let folder: string

  group.setup(async () => {
    folder = mkdtempSync(join(tmpdir(), 'quire-s3-'))
    s3 = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: folder,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    })
    const { port } = await s3.run()
    const endpoint = `http://127.0.0.1:${port}`
    bucket = new Disk(
      new S3Driver({
        credentials: CREDENTIALS,
        region: 'us-east-1',
        bucket: BUCKET,
        endpoint,
        forcePathStyle: true,
        visibility: 'private',
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      })
    )
    quire = await startQuire({
      ...process.env,
      LOG_LEVEL: 'warn',
      MEDIA_DISK: 's3',
      MEDIA_S3_BUCKET: BUCKET,
      MEDIA_S3_REGION: 'us-east-1',
      MEDIA_S3_ENDPOINT: endpoint,
      MEDIA_S3_KEY: CREDENTIALS.accessKeyId,
      MEDIA_S3_SECRET: CREDENTIALS.secretAccessKey,
      // Its own job queue: a purge job must run on the instance whose disk is the bucket
      // (this test process stores on `fs`; real instances share one disk).
      ...(process.env.REDIS_HOST
        ? { REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'quire:'}s3:` }
        : {}),
    })
  })
  group.teardown(async () => {
    await quire?.stop()
    await s3?.close()
    if (folder) rmSync(folder, { recursive: true, force: true })
  })
  group.each.timeout(120_000)

  async function fixture() {
    const book = await makeBook()
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smid = ok(
      await caller(book.session)('sendMsg', { ...base, msg: 'on s3' })
    ).createMessageId
    return { book, base, smid }
  }

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${quire.url}${path}`, { headers })
    return {
      status: response.status,
      headers: response.headers,
      bytes: Buffer.from(await response.arrayBuffer()),
    }
  }

  const keyOf = async (id: number) => {
    const row = await db.from('media_files').where('id', id).first()
    return String(row.storage_key)
  }
  const statusOf = async (path: string) => {
    const answer = await get(path)
    return answer.status
  }

  test('fileUpload stores in the bucket; full, ranges and derivatives are served from it', async ({
    assert,
  }) => {
    const { book, base, smid } = await fixture()
    const bytes = await files.jpeg(1600, 1200)
    const answer = ok(
      await upload(
        book.session,
        { ...base, smid },
        { bytes, name: 'Übersicht.jpg' },
        'fileUpload',
        quire.url
      )
    )
    const key = await keyOf(answer.id)
    assert.isTrue(await bucket.exists(key))
    assert.deepEqual(Buffer.from(await bucket.getBytes(key)), bytes)

    const full = await get(`/live/dbi/in/full/${answer.uuid}`)
    assert.equal(full.status, 200)
    assert.deepEqual(full.bytes, bytes)
    assert.equal(full.headers.get('content-length'), String(bytes.length))

    const part = await get(`/live/dbi/in/full/${answer.uuid}`, { Range: 'bytes=1000-1999' })
    assert.equal(part.status, 206)
    assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${bytes.length}`)
    assert.deepEqual(part.bytes, bytes.subarray(1000, 2000))
    const tail = await get(`/live/dbi/in/full/${answer.uuid}`, { Range: 'bytes=-100' })
    assert.deepEqual(tail.bytes, bytes.subarray(bytes.length - 100))

    // Above the memory cache's 256 KiB: the range is asked of the bucket (GetObject Range).
    const video = files.mp4(400_000)
    video.fill(0x42, 300_000)
    const long = ok(
      await upload(
        book.session,
        { ...base, smid },
        { bytes: video, name: 'long.mp4' },
        'fileUpload',
        quire.url
      )
    )
    const seek = await get(`/live/dbi/in/full/${long.uuid}`, { Range: 'bytes=299990-300009' })
    assert.equal(seek.status, 206)
    assert.equal(seek.headers.get('content-range'), `bytes 299990-300009/${video.length}`)
    assert.deepEqual(seek.bytes, video.subarray(299_990, 300_010))
    const end = await get(`/live/dbi/in/full/${long.uuid}`, { Range: 'bytes=-10' })
    assert.deepEqual(end.bytes, video.subarray(video.length - 10))

    for (const [size, width] of [
      ['tb', 150],
      ['cover', 400],
      ['norm', 1500],
    ] as const) {
      const derived = await get(`/live/dbi/in/${size}/${answer.uuid}`)
      assert.equal(derived.status, 200, size)
      assert.equal(await widthOf(derived.bytes), width, size)
    }
    const stored = await bucket.listAll('derived', { recursive: true })
    const names = [...stored.objects].flatMap((object) => ('key' in object ? [object.key] : []))
    const base32 = answer.internName.replace(/\.jpg$/, '')
    for (const size of ['tb', 'cover', 'norm'])
      assert.include(names, `derived/${size}/${base32.slice(0, 2)}/${base32}.jpg`)
  })

  test('a tus upload finishes into the bucket', async ({ assert }) => {
    const { book, base, smid } = await fixture()
    const bytes = Buffer.concat([files.pdf(), Buffer.alloc(200_000, 0x20)])
    const metadata = Object.entries({
      ...base,
      smid,
      o_u: book.session.o_u,
      u_c: book.session.o_u,
      sesskey: book.session.sesskey,
      filename: 'big.pdf',
    })
      .map(([name, value]) => `${name} ${Buffer.from(String(value)).toString('base64')}`)
      .join(',')
    const created = await fetch(`${quire.url}/live/upload`, {
      method: 'POST',
      headers: { ...TUS, 'Upload-Length': String(bytes.length), 'Upload-Metadata': metadata },
    })
    assert.equal(created.status, 201)
    const location = created.headers.get('location')!
    const half = 100_000
    for (const [offset, chunk] of [
      [0, bytes.subarray(0, half)],
      [half, bytes.subarray(half)],
    ] as const) {
      const patched = await fetch(location, {
        method: 'PATCH',
        headers: {
          ...TUS,
          'Upload-Offset': String(offset),
          'Content-Type': 'application/offset+octet-stream',
        },
        body: chunk,
      })
      assert.equal(patched.status, 204)
    }
    const message = ok(await caller(book.session)('getBookMessages', base)).bookMessages.find(
      (m: any) => m.smid === smid
    )
    assert.lengthOf(message.medias, 1)
    const key = await keyOf(message.medias[0].id)
    assert.deepEqual(Buffer.from(await bucket.getBytes(key)), bytes)
    const full = await get(`/live/dbi/odn/full/${message.medias[0].uuid}`)
    assert.deepEqual(full.bytes, bytes)
  })

  test('deleting the message removes its objects from the bucket', async ({ assert }) => {
    const { book, base, smid } = await fixture()
    const answer = ok(
      await upload(
        book.session,
        { ...base, smid },
        { bytes: await files.png(), name: 'p.png' },
        'fileUpload',
        quire.url
      )
    )
    assert.equal(await statusOf(`/live/dbi/in/tb/${answer.uuid}`), 200)
    const key = await keyOf(answer.id)
    const base32 = answer.internName.replace(/\.png$/, '')
    const derived = `derived/tb/${base32.slice(0, 2)}/${base32}.png`
    assert.isTrue(await bucket.exists(derived))

    // A copy in another book first: its own object (copied in the bucket) outlives the original.
    const other = await makeBook()
    await db.table('book_members').insert({
      book_id: other.id,
      user_id: book.owner.id,
      invite: 'accepted',
      right: 4,
      created_at: DateTime.now().toSQL({ includeOffset: false }),
    })
    const rpc = (params: Record<string, string>) =>
      fetch(`${quire.url}/live/api.php`, {
        method: 'POST',
        body: new URLSearchParams({
          version: '6.49q/6.49',
          o_u: book.session.o_u,
          u_c: book.session.o_u,
          sesskey: book.session.sesskey,
          ...params,
        }),
      }).then(async (response) => (await response.json()) as Record<string, any>)
    const copied = ok(
      await rpc({
        req: 'copyOrMoveMessage',
        ...base,
        msg_id: String(smid),
        to_b_o: other.b_o,
        to_b_c: other.b_c,
      })
    )
    const copy = ok(
      await caller(book.session)('getBookMessages', { b_o: other.b_o, b_c: other.b_c })
    ).bookMessages.find((m: any) => m.smid === copied.createMessageId)
    const copyKey = await keyOf(copy.medias[0].id)
    assert.notEqual(copyKey, key)

    // The delete goes to the s3 instance: its listener retires the files, its queue purges them.
    ok(await rpc({ req: 'deleteMsg', ...base, msg_id: String(smid) }))
    assert.equal(await statusOf(`/live/dbi/in/full/${answer.uuid}`), 404)
    await eventually(async () => !(await bucket.exists(key)) && !(await bucket.exists(derived)))
    assert.isTrue(await bucket.exists(copyKey))
    const kept = await get(`/live/dbi/in/full/${copy.medias[0].uuid}`)
    assert.equal(kept.status, 200)
    assert.equal(kept.bytes.length, answer.filesize)
  })
})
