import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import mediaConfig from '#plugins/media/config'
import {
  cellValue,
  dimensions,
  errorOf,
  fetchPath,
  files,
  filesTable,
  statusAt,
  upload,
} from '../helpers/media.js'

/** A book with an owner and a reader, and one message of the owner. */
async function fixture() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const sent = ok(await call('sendMsg', { b_o: book.b_o, b_c: book.b_c, msg: 'with files' }))
  return {
    book,
    call,
    smid: sent.createMessageId as number,
    base: { b_o: book.b_o, b_c: book.b_c },
  }
}

test.group('fileUpload to a message', () => {
  test('answers every field of 2.11 and updates medias, counts and lastMedia', async ({
    assert,
  }) => {
    const { book, call, smid, base } = await fixture()
    const answer = await upload(
      book.session,
      { ...base, smid },
      { bytes: await files.jpeg(), name: 'Holiday photo.jpeg', type: 'text/plain' }
    )
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.equal(answer.smid, smid)
    assert.isNumber(answer.id)
    assert.equal(answer.type, 'media')
    assert.equal(answer.mdc, 1)
    assert.equal(answer.ext, 'jpg')
    assert.equal(answer.originName, 'Holiday photo.jpeg')
    assert.match(answer.internName, /^[0-9a-f]{32}\.jpg$/)
    assert.match(answer.uuid, /^[0-9a-f-]{36}$/)
    assert.isTrue(answer.success)
    assert.isAbove(answer.filesize, 0)
    assert.match(answer.url, new RegExp(`/live/dbi/in/full/${answer.uuid}/Holiday_photo.jpeg$`))
    assert.match(answer.preview, /\/live\/dbi\/in\/_tb\//)
    assert.match(answer.gallery, /\/live\/dbi\/in\/norm\//)

    const doc = await upload(
      book.session,
      { ...base, smid },
      { bytes: files.pdf(), name: 'report.pdf' }
    )
    assert.equal(doc.type, 'doc')
    assert.equal(doc.mdc, 1)
    const second = await upload(
      book.session,
      { ...base, smid },
      { bytes: await files.png(), name: 'b.png' }
    )
    assert.equal(second.mdc, 2)

    const messages = ok(await call('getBookMessages', base)).bookMessages
    const message = messages.find((m: any) => m.smid === smid)
    assert.equal(message.nbMedias, 2)
    assert.equal(message.nbDocs, 1)
    assert.deepEqual(
      message.medias.map((m: any) => [
        m.id,
        m.type,
        m.ext,
        m.originName,
        m.internName,
        m.uuid,
        m.del,
      ]),
      [
        [answer.id, 'media', 'jpg', 'Holiday photo.jpeg', answer.internName, answer.uuid, false],
        [doc.id, 'doc', 'pdf', 'report.pdf', doc.internName, doc.uuid, false],
        [second.id, 'media', 'png', 'b.png', second.internName, second.uuid, false],
      ]
    )
    assert.isAbove(message.sstamp, 0)
    const info = ok(await call('getBookInfo', base)).book
    assert.equal(info.lastMedia, second.id)
  })

  test('the message can be named by its uuid in its book', async ({ assert }) => {
    const { book, call, base } = await fixture()
    const sent = ok(await call('sendMsg', { ...base, msg: 'by uuid', uuid: 'client-uuid-1' }))
    const answer = await upload(
      book.session,
      { ...base, uuid: 'client-uuid-1' },
      { bytes: await files.webp(), name: 'w.webp' }
    )
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.equal(answer.smid, sent.createMessageId)
    assert.equal(answer.ext, 'webp')
  })

  test('a reader, a stranger, an unknown message and a missing file get documented nok codes', async ({
    assert,
  }) => {
    const { book, smid, base } = await fixture()
    const jpeg = { bytes: await files.jpeg(), name: 'a.jpg' }
    const reader = book.members[0].session
    assert.equal(await errorOf(upload(reader, { ...base, smid }, jpeg)), 'FORBIDDEN')
    const other = await makeBook()
    const stranger = other.session
    assert.equal(await errorOf(upload(stranger, { ...base, smid }, jpeg)), 'NOT_FOUND')
    assert.equal(
      await errorOf(upload(book.session, { ...base, smid: 99999999 }, jpeg)),
      'NOT_FOUND'
    )
    assert.equal(await errorOf(upload(book.session, { ...base, smid }, null)), 'MISSING_PARAMETER')
    assert.equal(await errorOf(upload(null, { ...base, smid }, jpeg)), 'MISSING_PARAMETER')
    const rows = await db.from('media_files').where('smid', smid)
    assert.lengthOf(rows, 0)
  })

  test('limits: size, pixels (before decoding) and corrupt images leave nothing behind', async ({
    assert,
  }) => {
    const { book, smid, base } = await fixture()
    const saved = { ...mediaConfig }
    try {
      mediaConfig.maxUploadBytes = 1000
      const big = await upload(
        book.session,
        { ...base, smid },
        { bytes: await files.jpeg(), name: 'big.jpg' }
      )
      assert.equal(big.errorCode, 'PAYLOAD_TOO_LARGE')
      mediaConfig.maxUploadBytes = saved.maxUploadBytes
      mediaConfig.maxPixels = 100 * 100
      const bomb = await upload(
        book.session,
        { ...base, smid },
        { bytes: await files.png(2000, 2000), name: 'bomb.png' }
      )
      assert.equal(bomb.errorCode, 'PAYLOAD_TOO_LARGE')
      assert.include(bomb.errorMsg, 'MEDIA_MAX_PIXELS')
    } finally {
      Object.assign(mediaConfig, saved)
    }
    const corrupt = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(500, 7)])
    const bad = await upload(book.session, { ...base, smid }, { bytes: corrupt, name: 'c.jpg' })
    assert.equal(bad.errorCode, 'INVALID_PARAMETER')
    assert.lengthOf(await db.from('media_files').where('smid', smid), 0)
  })

  test('a UTF-8 file name is kept as sent, in originName and in Content-Disposition', async ({
    assert,
  }) => {
    const { book, call, smid, base } = await fixture()
    const name = 'Übersicht – 日本.pdf'
    const answer = await upload(book.session, { ...base, smid }, { bytes: files.pdf(), name })
    assert.equal(answer.status, 'ok', JSON.stringify(answer))
    assert.equal(answer.originName, name)
    assert.equal(answer.name, name)
    const message = ok(await call('getBookMessages', base)).bookMessages.find(
      (m: any) => m.smid === smid
    )
    assert.equal(message.medias[0].originName, name)
    const served = await fetchPath(`/live/dbi/in/full/${answer.uuid}`)
    assert.equal(served.status, 200)
    const disposition = served.headers.get('content-disposition')!
    assert.include(disposition, `filename*=UTF-8''${encodeURIComponent(name)}`)
    // The ASCII fallback replaces what it cannot say, never with mojibake.
    assert.include(disposition, 'filename="_bersicht _ __.pdf"')
  })

  test('types are sniffed from content, not from the name or the MIME type', async ({ assert }) => {
    const { book, smid, base } = await fixture()
    const png = await upload(
      book.session,
      { ...base, smid },
      { bytes: await files.png(), name: 'evil.html', type: 'text/html' }
    )
    assert.equal(png.ext, 'png')
    assert.equal(png.type, 'media')
    const html = await upload(
      book.session,
      { ...base, smid },
      {
        bytes: Buffer.from('<html><script>alert(1)</script></html>'),
        name: 'photo.jpg',
        type: 'image/jpeg',
      }
    )
    assert.equal(html.type, 'doc')
    assert.equal(html.ext, 'bin')
    const served = await fetchPath(`/live/dbi/odn/full/${html.uuid}/photo.jpg`)
    assert.equal(served.headers.get('content-type'), 'application/octet-stream')
    assert.match(served.headers.get('content-disposition')!, /^attachment/)
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff')
    const mp3 = await upload(book.session, { ...base, smid }, { bytes: files.mp3(), name: 'song' })
    assert.deepEqual([mp3.type, mp3.ext], ['media', 'mp3'])
    const mp4 = await upload(
      book.session,
      { ...base, smid },
      { bytes: files.mp4(), name: 'clip.bin' }
    )
    assert.deepEqual([mp4.type, mp4.ext], ['media', 'mp4'])
  })
})

test.group('fileUpload to a file cell', () => {
  test('appends to the cell, works out the book, answers the cell fields', async ({ assert }) => {
    const book = await makeBook()
    const call = caller(book.session)
    const { catId, fieldId } = await filesTable(book)
    const textField = ok(
      await call('createField', {
        b_o: book.b_o,
        catId,
        name: 'Title',
        type: 'shorttext',
      })
    ).fieldId
    const rows = ok(
      await call('createOrUpdateTableRows', {
        b_o: book.b_o,
        rows: JSON.stringify({ tmp1: { [textField]: 'first' } }),
      })
    )
    const rowId = rows.newRows[0].id

    const first = await upload(
      book.session,
      { rowId, fieldId },
      { bytes: await files.jpeg(), name: 'scan.jpg' }
    )
    assert.equal(first.status, 'ok', JSON.stringify(first))
    assert.equal(first.row_id, rowId)
    assert.equal(first.field_id, fieldId)
    assert.equal(first.b_o, book.b_o)
    assert.equal(first.b_c, book.b_c)
    assert.equal(first.name, 'scan.jpg')
    assert.isAbove(first.filesize, 0)
    assert.match(first.url, /^http:\/\/.+\/live\/dbi\/in\/full\//)
    const second = await upload(
      book.session,
      { rowId, fieldId, b_o: book.b_o },
      { bytes: files.pdf(), name: 'a.pdf' }
    )
    assert.equal(second.status, 'ok', JSON.stringify(second))

    const cell = await cellValue(book, catId, fieldId, rowId)
    assert.deepEqual(
      cell.map((file: any) => [file.uuid, file.type, file.name]),
      [
        [first.uuid, 'media', 'scan.jpg'],
        [second.uuid, 'doc', 'a.pdf'],
      ]
    )

    const fresh = await upload(
      book.session,
      { rowId: 'tmpNEW_ROW', fieldId },
      { bytes: await files.png(), name: 'n.png' }
    )
    assert.equal(fresh.status, 'ok', JSON.stringify(fresh))
    assert.isAbove(fresh.row_id, 0)

    assert.equal(
      await errorOf(
        upload(
          book.session,
          { rowId, fieldId: textField },
          { bytes: await files.png(), name: 'x.png' }
        )
      ),
      'INVALID_PARAMETER'
    )
    const other = await makeBook()
    const stranger = other.session
    assert.equal(
      await errorOf(
        upload(stranger, { rowId, fieldId }, { bytes: await files.png(), name: 'x.png' })
      ),
      'NOT_FOUND'
    )
    assert.lengthOf(await db.from('media_files').where('field_id', textField), 0)

    const image = await fetchPath(new URL(first.preview).pathname)
    assert.equal(image.status, 200)
    const size = await dimensions(image.bytes)
    assert.equal(size.width, 150)
  })
})

test.group('fileUpload: the client’s uuid', () => {
  test('a cell or message upload keeps the client’s uuid: answered, stored, served', async ({
    assert,
  }) => {
    const { book, smid, base } = await fixture()
    const { catId, fieldId } = await filesTable(book)
    const cellUuid = randomUUID()
    const inCell = ok(
      await upload(
        book.session,
        { rowId: 'tmp1', fieldId, uuid: cellUuid },
        { bytes: await files.png(), name: 'w.png' }
      )
    )
    assert.equal(inCell.uuid, cellUuid)
    assert.include(inCell.url, `/dbi/in/full/${cellUuid}/`)
    const cell = await cellValue(book, catId, fieldId, inCell.row_id)
    assert.equal(cell[0].uuid, cellUuid)
    // The message form: with smid, the uuid is the file's (upper case is the same uuid).
    const messageUuid = randomUUID()
    const inMessage = ok(
      await upload(
        book.session,
        { ...base, smid, uuid: messageUuid.toUpperCase() },
        { bytes: await files.jpeg(), name: 'm.jpg' }
      )
    )
    assert.equal(inMessage.uuid, messageUuid)
    const row = await db.from('media_files').where('id', inMessage.id).first()
    assert.equal(row.uuid, messageUuid)
    for (const path of [
      `/live/dbi/in/full/${messageUuid}`,
      `/live/dbi/oin/full/${messageUuid}`,
      `/live/dbi/in/tb/${cellUuid}`,
    ]) {
      const served = await fetchPath(path, { session: book.session })
      assert.equal(served.status, 200, path)
    }
  })

  test('a uuid already used is refused, nothing stored; the message’s own uuid names the message', async ({
    assert,
  }) => {
    const { book, call, smid, base } = await fixture()
    const uuid = randomUUID()
    ok(await upload(book.session, { ...base, smid, uuid }, { bytes: files.pdf(), name: 'a.pdf' }))
    const before = await db.from('media_files').count('* as n').first()
    const again = await upload(
      book.session,
      { ...base, smid, uuid },
      { bytes: files.pdf(), name: 'b.pdf' }
    )
    assert.equal(again.errorCode, 'INVALID_PARAMETER')
    assert.include(again.errorMsg, 'uuid')
    const after = await db.from('media_files').count('* as n').first()
    assert.equal(Number(after.n), Number(before.n))
    // Concurrent uploads naming one uuid: one is kept, the others are refused.
    const shared = randomUUID()
    const racing = await Promise.all(
      Array.from({ length: 4 }, async () =>
        upload(
          book.session,
          { ...base, smid, uuid: shared },
          { bytes: await files.png(), name: 'r.png' }
        )
      )
    )
    assert.deepEqual(racing.map((answer) => answer.errorCode ?? 'ok').sort(), [
      'INVALID_PARAMETER',
      'INVALID_PARAMETER',
      'INVALID_PARAMETER',
      'ok',
    ])
    // A client sending the message's uuid with its smid names the message: the files get server uuids.
    const sent = ok(await call('sendMsg', { ...base, msg: 'own uuid', uuid: randomUUID() }))
    const files2 = []
    for (const name of ['x.pdf', 'y.pdf'])
      files2.push(
        ok(
          await upload(
            book.session,
            { ...base, smid: sent.createMessageId, uuid: sent.uuid },
            { bytes: files.pdf(), name }
          )
        )
      )
    assert.notEqual(files2[0].uuid, sent.uuid)
    assert.notEqual(files2[0].uuid, files2[1].uuid)
  })

  test('a non-random (not version 4) client uuid opens only the session-bound forms', async ({
    assert,
  }) => {
    const { book, smid, base } = await fixture()
    // A time-based (version 1) uuid: guessable, so no key to the open forms.
    const timeBased = `6ba7b810-9dad-11d1-80b4-${randomUUID().slice(-12)}`
    const answer = ok(
      await upload(
        book.session,
        { ...base, smid, uuid: timeBased },
        { bytes: await files.jpeg(), name: 't.jpg' }
      )
    )
    assert.equal(answer.uuid, timeBased)
    assert.include(answer.url, `/dbi/in/full/${answer.internName}/`)
    assert.equal(await statusAt(`/live/dbi/in/full/${timeBased}`), 404)
    assert.equal(await statusAt(new URL(answer.url).pathname), 200)
    const bySession = await fetchPath(`/live/dbi/oin/full/${timeBased}`, { session: book.session })
    assert.equal(bySession.status, 200)
    // Something that is no uuid at all: a server uuid is answered.
    const other = ok(
      await upload(
        book.session,
        { ...base, smid, uuid: 'not-a-uuid' },
        { bytes: await files.jpeg(), name: 'u.jpg' }
      )
    )
    assert.match(other.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4/)
  })
})
