import { test } from '@japa/runner'
import sharp from 'sharp'
import { startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { fetchPath, upload, widthOf } from '../helpers/media.js'

/** A JPEG of noise: slow to decode, so derivatives of several overlap. */
const noisy = (seed: number) =>
  sharp({
    create: {
      width: 2400 + seed,
      height: 2400,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 95 })
    .toBuffer()

test.group('image derivatives are bounded (MEDIA_SHARP_CONCURRENCY)', (group) => {
  let server: QuireProcess | null = null
  group.teardown(async () => {
    await server?.stop()
  })

  test('past the bound a /dbi request answers 503 with Retry-After, and later the image', async ({
    assert,
  }) => {
    server = await startQuire({ ...process.env, LOG_LEVEL: 'warn', MEDIA_SHARP_CONCURRENCY: '1' })
    const book = await makeBook()
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smid = ok(
      await caller(book.session)('sendMsg', { ...base, msg: 'noise' })
    ).createMessageId
    const uuids: string[] = []
    for (let index = 0; index < 6; index++) {
      const answer = await upload(
        book.session,
        { ...base, smid },
        { bytes: await noisy(index), name: `n${index}.jpg` },
        'fileUpload',
        server.url
      )
      uuids.push(ok(answer).uuid)
    }
    // Six different derivatives asked at once of a process that makes one at a time.
    const answers = await Promise.all(
      uuids.map((uuid) => fetchPath(`/live/dbi/in/norm/${uuid}`, {}, server!.url))
    )
    const statuses = answers.map((answer) => answer.status)
    assert.isTrue(
      statuses.every((status) => status === 200 || status === 503),
      statuses.join()
    )
    assert.include(statuses, 503)
    assert.include(statuses, 200)
    for (const answer of answers.filter((candidate) => candidate.status === 503)) {
      assert.equal(answer.headers.get('retry-after'), '2')
      assert.lengthOf(answer.bytes, 0)
    }
    // Asked again one at a time, each is made.
    for (const uuid of uuids) {
      const again = await fetchPath(`/live/dbi/in/norm/${uuid}`, {}, server.url)
      assert.equal(again.status, 200)
      assert.equal(await widthOf(again.bytes), 1500)
    }
  }).timeout(240_000) // a server boot, six 2400 px uploads and their derivatives on a busy machine
})
