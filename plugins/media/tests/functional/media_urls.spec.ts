import { test } from '@japa/runner'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { dimensions, fetchPath, files, statusAt, upload, widthOf } from '../helpers/media.js'

/** A book with an image (EXIF orientation 6), a PDF, an MP4 and a JPEG in one message. */
async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const smid = ok(await call('sendMsg', { ...base, msg: 'files' })).createMessageId
  const send = async (bytes: Buffer, name: string) =>
    ok(await upload(book.session, { ...base, smid }, { bytes, name }))
  const big = await send(await files.jpeg(2000, 1000), 'wide.jpg')
  const rotated = await send(await files.rotated(), 'rotated.jpg')
  const pdf = await send(files.pdf(), 'Rapport été.pdf')
  const video = await send(files.mp4(), 'clip.mp4')
  // Above MEDIA's 256 KiB memory limit: streamed from the disk rather than held in memory.
  const longVideo = await send(files.mp4(400_000), 'long.mp4')
  return { book, call, base, smid, big, rotated, pdf, video, longVideo }
}

test.group('/dbi URLs', (group) => {
  let f: Awaited<ReturnType<typeof fixture>>
  group.setup(async () => {
    f = await fixture()
  })

  test('sizes: norm 1500, cover 400, tb and _tb 150, full the original bytes', async ({
    assert,
  }) => {
    const { big, book } = f
    const expected: [string, number][] = [
      ['norm', 1500],
      ['cover', 400],
      ['tb', 150],
      ['_tb', 150],
    ]
    for (const [size, width] of expected) {
      const answer = await fetchPath(`/live/dbi/in/${size}/${big.uuid}/wide.jpg`)
      assert.equal(answer.status, 200, size)
      assert.equal(answer.headers.get('content-type'), 'image/jpeg')
      assert.equal(await widthOf(answer.bytes), width, size)
    }
    const full = await fetchPath(`/live/dbi/in/full/${big.internName}`)
    assert.equal(full.bytes.length, big.filesize)
    // The same through every session-bound form.
    const byCount = await fetchPath(`/live/dbi/ic/tb/${book.b_o}/${book.b_c}/${f.smid}/1/x.jpg`, {
      session: book.session,
    })
    assert.equal(byCount.status, 200)
    assert.equal(await widthOf(byCount.bytes), 150)
    const byId = await fetchPath(`/live/dbi/ii/cover/${book.b_o}/${book.b_c}/${big.id}`, {
      session: book.session,
      form: true,
    })
    assert.equal(await widthOf(byId.bytes), 400)
  })

  test('the media-file forms (oic, oii, oin) answer the original whatever the size (4.A.4)', async ({
    assert,
  }) => {
    const { book, big } = f
    const at = `${book.b_o}/${book.b_c}`
    for (const path of [
      `/live/dbi/oic/norm/${at}/${f.smid}/1/wide.jpg`,
      `/live/dbi/oii/tb/${at}/${big.id}`,
      `/live/dbi/oin/cover/${big.uuid}`,
      `/live/dbi/oin/_tb/${at}/${big.uuid}/wide.jpg`,
    ]) {
      const answer = await fetchPath(path, { session: book.session })
      assert.equal(answer.status, 200, path)
      assert.equal(answer.bytes.length, big.filesize, path)
      assert.equal(await widthOf(answer.bytes), 2000, path)
    }
    // Control: the image forms apply the size.
    const sized = await fetchPath(`/live/dbi/ic/norm/${at}/${f.smid}/1`, { session: book.session })
    assert.equal(await widthOf(sized.bytes), 1500)
  })

  test('every answer carries the sandbox Content-Security-Policy: no script, even for a PDF', async ({
    assert,
  }) => {
    const { book, pdf, big, video } = f
    const at = `${book.b_o}/${book.b_c}`
    const answers = [
      await fetchPath(`/live/dbi/odn/full/${pdf.uuid}/x.pdf`),
      await fetchPath(`/live/dbi/in/norm/${big.uuid}`),
      await fetchPath(`/live/dbi/oii/full/${at}/${video.id}`, {
        session: book.session,
        headers: { Range: 'bytes=0-9' },
      }),
      await fetchPath(`/live/dbi/oii/full/${at}/${video.id}`, {
        session: book.session,
        headers: { Range: `bytes=${video.filesize + 9}-` },
      }),
      await fetchPath(`/live/dbi/dn/tb/${pdf.uuid}`),
      await fetchPath(`/live/dbi/ic/tb/${at}/${f.smid}/1`),
      await fetchPath(`/live/dbi/in/tb/00000000-0000-4000-8000-000000000000`),
    ]
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 206, 416, 200, 403, 404]
    )
    for (const answer of answers) {
      const policy = answer.headers.get('content-security-policy') ?? ''
      assert.match(policy, /^sandbox; default-src 'none'/)
      assert.notMatch(policy, /allow-scripts|script-src|unsafe-eval/)
    }
  })

  test('EXIF orientation is applied and metadata stripped from derivatives', async ({ assert }) => {
    const answer = await fetchPath(`/live/dbi/in/full/${f.rotated.uuid}`)
    const original = await dimensions(answer.bytes)
    assert.equal(original.orientation, 6, 'full is the original')
    const thumbnail = await fetchPath(`/live/dbi/in/tb/${f.rotated.uuid}`)
    const tb = await dimensions(thumbnail.bytes)
    assert.deepEqual([tb.width, tb.height], [75, 150])
    assert.isUndefined(tb.exif)
    assert.isUndefined(tb.orientation)
  })

  test('documents: tb is the icon of the extension, the open forms the file itself', async ({
    assert,
  }) => {
    const { book, pdf } = f
    const icon = await fetchPath(`/live/dbi/dn/tb/${pdf.uuid}/x.pdf`)
    assert.equal(icon.headers.get('content-type'), 'image/png')
    assert.equal(await widthOf(icon.bytes), 150)
    for (const path of [
      `/live/dbi/odn/full/${pdf.internName}/any-name.pdf`,
      `/live/dbi/odc/full/${book.b_o}/${book.b_c}/${f.smid}/1`,
      `/live/dbi/odi/full/${book.b_o}/${book.b_c}/${pdf.id}/`,
    ]) {
      const answer = await fetchPath(path, { session: book.session })
      assert.equal(answer.status, 200, path)
      assert.equal(answer.headers.get('content-type'), 'application/pdf')
      assert.equal(answer.bytes.toString('latin1', 0, 5), '%PDF-')
      assert.equal(
        answer.headers.get('content-disposition'),
        `inline; filename="Rapport _t_.pdf"; filename*=UTF-8''Rapport%20%C3%A9t%C3%A9.pdf`
      )
    }
    const dc = await fetchPath(`/live/dbi/dc/tb/${book.b_o}/${book.b_c}/${f.smid}/1`, {
      session: book.session,
    })
    assert.equal(dc.headers.get('content-type'), 'image/png')
  })

  test('media files: ranges, ETag and Last-Modified with 304, HEAD', async ({ assert }) => {
    const { book } = f
    // A small file (served from memory) and a large one (streamed from the disk) alike.
    for (const video of [f.video, f.longVideo]) {
      const path = `/live/dbi/oii/full/${book.b_o}/${book.b_c}/${video.id}/clip.mp4`
      const whole = await fetchPath(path, { session: book.session })
      assert.equal(whole.status, 200)
      assert.equal(whole.headers.get('content-type'), 'video/mp4')
      assert.equal(whole.headers.get('accept-ranges'), 'bytes')
      assert.equal(whole.bytes.length, video.filesize)
      const part = await fetchPath(path, {
        session: book.session,
        headers: { Range: 'bytes=4-11' },
      })
      assert.equal(part.status, 206)
      assert.equal(part.headers.get('content-range'), `bytes 4-11/${video.filesize}`)
      assert.equal(part.bytes.toString('latin1'), 'ftypisom')
      const tail = await fetchPath(path, { session: book.session, headers: { Range: 'bytes=-10' } })
      assert.equal(tail.bytes.length, 10)
      // Invalid (last before first): ignored, the whole file (RFC 9110 14.2).
      const invalid = await fetchPath(path, {
        session: book.session,
        headers: { Range: 'bytes=9-0' },
      })
      assert.equal(invalid.status, 200)
      assert.equal(invalid.bytes.length, video.filesize)
      assert.isNull(invalid.headers.get('content-range'))
      const beyond = await fetchPath(path, {
        session: book.session,
        headers: { Range: `bytes=${video.filesize + 5}-` },
      })
      assert.equal(beyond.status, 416)
      const etag = whole.headers.get('etag')!
      const again = await fetchPath(path, {
        session: book.session,
        headers: { 'If-None-Match': etag },
      })
      assert.equal(again.status, 304)
      assert.lengthOf(again.bytes, 0)
      const since = await fetchPath(path, {
        session: book.session,
        headers: { 'If-Modified-Since': whole.headers.get('last-modified')! },
      })
      assert.equal(since.status, 304)
      const head = await fetchPath(path, { session: book.session, method: 'HEAD' })
      assert.equal(head.status, 200)
      assert.equal(head.headers.get('content-length'), String(video.filesize))
    }
    const byCount = await fetchPath(`/live/dbi/oic/full/${book.b_o}/${book.b_c}/${f.smid}/3`, {
      session: book.session,
    })
    assert.equal(byCount.headers.get('content-type'), 'video/mp4')
    const oin = await fetchPath(
      `/live/dbi/oin/full/${book.b_o}/${book.b_c}/${f.video.uuid}/c.mp4`,
      {
        session: book.session,
      }
    )
    assert.equal(oin.status, 200)
  })

  test('access: no session 403, a stranger 404 whether or not the file exists, members see', async ({
    assert,
  }) => {
    const { book, big } = f
    const other = await makeBook()
    const stranger = other.session
    const reader = book.members[0].session
    const paths = [
      `/live/dbi/ic/tb/${book.b_o}/${book.b_c}/${f.smid}/1`,
      `/live/dbi/ii/tb/${book.b_o}/${book.b_c}/${big.id}`,
      `/live/dbi/last/cover/${book.b_o}/${book.b_c}/${big.id}`,
      `/live/dbi/oin/full/${big.uuid}`,
    ]
    for (const path of paths) {
      const none = await fetchPath(path)
      assert.equal(none.status, 403, path)
      assert.lengthOf(none.bytes, 0)
      const strange = await fetchPath(path, { session: stranger })
      assert.equal(strange.status, 404, path)
      assert.lengthOf(strange.bytes, 0)
      const member = await fetchPath(path, { session: reader })
      assert.equal(member.status, 200, path)
    }
    const missing = await fetchPath(`/live/dbi/ii/tb/${book.b_o}/${book.b_c}/999999`, {
      session: stranger,
    })
    assert.equal(missing.status, 404)
    const wrongBook = await fetchPath(`/live/dbi/ii/tb/${book.b_o}/nope/${big.id}`, {
      session: book.session,
    })
    assert.equal(wrongBook.status, 404)
    // By name: anyone, with no session.
    assert.equal(await statusAt(`/live/dbi/in/tb/${big.uuid}`), 200)
    assert.equal(await statusAt(`/live/dbi/in/tb/00000000-0000-0000-0000-000000000000`), 404)
    assert.equal(await statusAt(`/live/dbi/in/huge/${big.uuid}`), 404)
    assert.equal(await statusAt(`/live/dbi/zz/tb/${big.uuid}`), 404)
  })

  test('prefixes, doubled slashes, the [name] segment and the last image', async ({ assert }) => {
    const { book, big } = f
    for (const path of [
      `/dev/dbi/in/tb/${big.uuid}/whatever.png`,
      `//dev//dbi/in/tb/${big.uuid}`,
      `/live/dbi/in/tb/${big.internName}/a/b`,
    ]) {
      assert.equal(await statusAt(path), 200, path)
    }
    const last = await fetchPath(`/live/dbi/last/tb/${book.b_o}/${book.b_c}`, {
      session: book.session,
    })
    // The last image is the rotated one (the PDF and the video are not images).
    const shown = await dimensions(last.bytes)
    assert.deepEqual([shown.width, shown.height], [75, 150])
  })

  test('concurrent first requests share one generation', async ({ assert }) => {
    const { book } = f
    const fresh = ok(
      await upload(
        book.session,
        { ...f.base, smid: f.smid },
        { bytes: await files.png(900, 900), name: 'p.png' }
      )
    )
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => fetchPath(`/live/dbi/in/norm/${fresh.uuid}`))
    )
    const etags = new Set(answers.map((answer) => answer.headers.get('etag')))
    assert.equal(etags.size, 1)
    assert.isTrue(answers.every((answer) => answer.status === 200))
    assert.equal(answers[0].headers.get('content-type'), 'image/png')
  })
})
