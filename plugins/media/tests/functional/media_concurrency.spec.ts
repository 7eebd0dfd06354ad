import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { startQuire, type QuireProcess } from '../../../../bench/lib/quire_process.js'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { hasRedis, onMysql } from '#tests/helpers/database'
import { serverUrl } from '#tests/helpers/server'
import { cellValue, files, filesTable, statusAt, upload } from '../helpers/media.js'

const NEEDS = 'needs MariaDB and Redis (DB_CONNECTION=mysql, REDIS_HOST)'
const UPLOADS = 12

/**
 * Two instances sharing the database and the disk: this test server and a
 * second Quire process. Uploads to one message or one file cell go to both at
 * once; every file must end in the list (no attach may overwrite another's).
 */
test.group('concurrent uploads across two instances', (group) => {
  let second: QuireProcess | null = null
  group.setup(async () => {
    // The second instance trusts a file row it looked up for 10 minutes: only the hub's signal
    // can make it forget a file deleted through this one in time.
    if (onMysql() && hasRedis())
      second = await startQuire({
        ...process.env,
        LOG_LEVEL: 'warn',
        MEDIA_NAME_CACHE_SECONDS: '600',
      })
  })
  group.teardown(async () => {
    await second?.stop()
    second = null
  })
  group.each.timeout(180_000)

  const origins = () => [serverUrl(), second!.url]

  test('N uploads to one message, split between the instances, are all in medias and the counts', async ({
    assert,
  }) => {
    const book = await makeBook()
    const call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smid = ok(await call('sendMsg', { ...base, msg: 'many files' })).createMessageId
    const png = await files.png(64, 64)
    const answers = await Promise.all(
      Array.from({ length: UPLOADS }, (_, index) =>
        upload(
          book.session,
          { ...base, smid },
          index % 2 === 0
            ? { bytes: png, name: `image-${index}.png` }
            : { bytes: files.pdf(), name: `doc-${index}.pdf` },
          'fileUpload',
          origins()[index % 2]
        )
      )
    )
    for (const answer of answers) assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const message = ok(await call('getBookMessages', base)).bookMessages.find(
      (m: any) => m.smid === smid
    )
    assert.sameMembers(
      message.medias.map((media: any) => media.uuid),
      answers.map((answer) => answer.uuid)
    )
    assert.equal(message.nbMedias, UPLOADS / 2)
    assert.equal(message.nbDocs, UPLOADS / 2)
    // Each type's rank (mdc) was handed out once.
    for (const type of ['media', 'doc']) {
      const ranks = answers.filter((answer) => answer.type === type).map((answer) => answer.mdc)
      assert.sameMembers(
        ranks,
        Array.from({ length: UPLOADS / 2 }, (_, index) => index + 1)
      )
    }
  }).skip(!(onMysql() && hasRedis()), NEEDS)

  test('N uploads to one file cell, split between the instances, are all in the cell', async ({
    assert,
  }) => {
    const book = await makeBook()
    const { catId, fieldId } = await filesTable(book)
    const first = ok(
      await upload(
        book.session,
        { rowId: 'tmpROW', fieldId },
        { bytes: files.pdf(), name: '0.pdf' }
      )
    )
    const rowId = first.row_id
    const answers = await Promise.all(
      Array.from({ length: UPLOADS }, (_, index) =>
        upload(
          book.session,
          { rowId, fieldId },
          { bytes: files.pdf(), name: `${index + 1}.pdf` },
          'fileUpload',
          origins()[index % 2]
        )
      )
    )
    for (const answer of answers) assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const cell = await cellValue(book, catId, fieldId, rowId)
    assert.sameMembers(
      cell.map((item: any) => item.uuid),
      [first, ...answers].map((answer) => answer.uuid)
    )
    // None of them was taken for a file removed from the cell.
    const live = await db.from('media_files').where('row_id', rowId).where('del', false)
    assert.lengthOf(live, UPLOADS + 1)
  }).skip(!(onMysql() && hasRedis()), NEEDS)

  test('uploads to more messages at once than the pool has connections all attach', async ({
    assert,
  }) => {
    // Each attach to a message holds a named lock on a pooled connection (20 in the pool):
    // 30 at once must queue for locks rather than take every connection and wait forever.
    const book = await makeBook()
    const call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smids: number[] = []
    for (let index = 0; index < 30; index++)
      smids.push(ok(await call('sendMsg', { ...base, msg: `m${index}` })).createMessageId)
    const answers = await Promise.all(
      smids.map((smid, index) =>
        upload(book.session, { ...base, smid }, { bytes: files.pdf(), name: `${index}.pdf` })
      )
    )
    for (const answer of answers) assert.equal(answer.status, 'ok', JSON.stringify(answer))
    const messages = ok(await call('getBookMessages', { ...base, nbMax: 50 })).bookMessages
    for (const smid of smids)
      assert.lengthOf(messages.find((message: any) => message.smid === smid).medias, 1)
  }).skip(!(onMysql() && hasRedis()), NEEDS)

  test('a file deleted through one instance is no longer served by the other', async ({
    assert,
  }) => {
    const book = await makeBook()
    const call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smid = ok(await call('sendMsg', { ...base, msg: 'soon gone' })).createMessageId
    const image = ok(
      await upload(
        book.session,
        { ...base, smid },
        { bytes: await files.png(64, 64), name: 'a.png' }
      )
    )
    const paths = [`/live/dbi/in/full/${image.uuid}`, `/live/dbi/in/tb/${image.internName}`]
    // The second instance has looked the file up (and holds its row and its bytes).
    for (const path of paths) assert.equal(await statusAt(path, {}, second!.url), 200)
    ok(await call('deleteMsg', { ...base, msg_id: smid }))
    for (const path of paths) assert.equal(await statusAt(path), 404)
    // The signal travels through Redis: wait for it (without it the row stays trusted 10 minutes).
    const deadline = Date.now() + 60_000
    let statuses: number[] = []
    while (Date.now() < deadline) {
      statuses = await Promise.all(paths.map((path) => statusAt(path, {}, second!.url)))
      if (statuses.every((status) => status === 404)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.deepEqual(statuses, [404, 404])
  }).skip(!(onMysql() && hasRedis()), NEEDS)
})
