import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import { BookService } from '#plugins/books/services/book_service'
import { MediaStore } from '#plugins/media/services/media_store'
import { DerivativeService } from '#plugins/media/services/derivative_service'
import { caller, eventually, makeBook, ok, ownerActor } from '#plugins/tables/tests/helpers/tables'
import type { Session } from '#tests/helpers/users'
import { cellValue, fetchPath, files, filesTable, statusAt, upload } from '../helpers/media.js'

type Book = Awaited<ReturnType<typeof makeBook>>
type Answer = Record<string, any>

/** Every URL form that can name the file, with the status each answers. */
async function statuses(book: Book, file: Answer, smid?: number) {
  const session = book.session
  const owner = book.b_o
  const code = book.b_c
  const paths: [string, string, Session | null][] = [
    ['in full', `/live/dbi/in/full/${file.uuid}`, null],
    ['in tb', `/live/dbi/in/tb/${file.internName}`, null],
    ['dn', `/live/dbi/dn/full/${file.uuid}`, null],
    ['odn', `/live/dbi/odn/full/${file.internName}`, null],
    ['oin', `/live/dbi/oin/norm/${owner}/${code}/${file.uuid}`, session],
    ['ii', `/live/dbi/ii/tb/${owner}/${code}/${file.id}`, session],
    ['odi', `/live/dbi/odi/full/${owner}/${code}/${file.id}`, session],
  ]
  if (smid !== undefined) {
    const form = file.type === 'doc' ? 'dc' : 'ic'
    paths.push([form, `/live/dbi/${form}/full/${owner}/${code}/${smid}/1`, session])
  }
  const answers: Record<string, number> = {}
  for (const [name, path, withSession] of paths)
    answers[name] = await statusAt(path, { session: withSession })
  return answers
}

const all = (answers: Record<string, number>, status: number) =>
  Object.fromEntries(Object.keys(answers).map((name) => [name, status]))

/** The disk paths of a file's original and of its made derivatives. */
async function storedPaths(file: Answer) {
  const store = await app.container.make(MediaStore)
  const derivatives = await app.container.make(DerivativeService)
  const row = await db.from('media_files').where('id', file.id).first()
  const keys = [row.storage_key, ...derivatives.keysOf(row)]
  const existing: string[] = []
  for (const key of keys) if ((await store.stat(key)) !== null) existing.push(key)
  return existing
}

const purged = (file: Answer) =>
  eventually(async () => {
    const left = await storedPaths(file)
    return left.length === 0
  })

async function messageWithFiles() {
  const book = await makeBook([{ right: 1 }])
  const call = caller(book.session)
  const base = { b_o: book.b_o, b_c: book.b_c }
  const smid = ok(await call('sendMsg', { ...base, msg: 'with files' })).createMessageId as number
  const image = ok(
    await upload(book.session, { ...base, smid }, { bytes: await files.jpeg(), name: 'p.jpg' })
  )
  const doc = ok(
    await upload(book.session, { ...base, smid }, { bytes: files.pdf(), name: 'd.pdf' })
  )
  // A derivative made, so that its removal is checked too.
  assert200(await statusAt(`/live/dbi/in/tb/${image.uuid}`))
  return { book, call, base, smid, image, doc }
}

function assert200(status: number) {
  if (status !== 200) throw new Error(`expected 200, got ${status}`)
}

test.group('files follow what holds them', () => {
  test('a deleted message: its files answer 404 on every URL form, bytes and derivatives go', async ({
    assert,
  }) => {
    const { book, call, base, smid, image, doc } = await messageWithFiles()
    const before = await statuses(book, image, smid)
    assert.deepEqual(before, all(before, 200))
    const stored = await storedPaths(image)
    assert.isAbove(stored.length, 1, 'original and tb on the disk')

    const lastMedia = async () => ok(await call('getBookInfo', base)).book.lastMedia
    assert.equal(await lastMedia(), image.id)

    ok(await call('deleteMsg', { ...base, msg_id: smid }))
    // The book's last image is gone with it.
    assert.equal(await lastMedia(), 0)

    for (const file of [image, doc]) {
      const after = await statuses(book, file, smid)
      assert.deepEqual(after, all(after, 404), file.originName)
    }
    await purged(image)
    await purged(doc)
    const rows = await db.from('media_files').where('smid', smid)
    assert.deepEqual(
      rows.map((row) => Boolean(row.del)),
      [true, true]
    )
  })

  test('a copied message has files of its own: deleting the original, or moving it, keeps them', async ({
    assert,
  }) => {
    const { book, call, base, smid, image } = await messageWithFiles()
    const target = await makeBook()
    await db.table('book_members').insert({
      book_id: target.id,
      user_id: book.owner.id,
      invite: 'accepted',
      right: 4,
      created_at: DateTime.now().toSQL({ includeOffset: false }),
    })
    const copied = ok(
      await call('copyOrMoveMessage', {
        ...base,
        msg_id: smid,
        to_b_o: target.b_o,
        to_b_c: target.b_c,
      })
    )
    const copy = ok(
      await call('getBookMessages', { b_o: target.b_o, b_c: target.b_c })
    ).bookMessages.find((m: any) => m.smid === copied.createMessageId)
    assert.lengthOf(copy.medias, 2)
    assert.notEqual(copy.medias[0].uuid, image.uuid)
    assert.notEqual(copy.medias[0].internName, image.internName)
    assert.equal(copy.medias[0].originName, 'p.jpg')
    const copiedImage = copy.medias[0]
    const targetInfo = ok(await call('getBookInfo', { b_o: target.b_o, b_c: target.b_c })).book
    assert.equal(targetInfo.lastMedia, copiedImage.id)

    // Move the original too (a copy, then the original deleted).
    const moved = ok(
      await call('copyOrMoveMessage', {
        ...base,
        msg_id: smid,
        to_b_o: target.b_o,
        to_b_c: target.b_c,
        move: 1,
      })
    )
    assert.equal(await statusAt(`/live/dbi/in/full/${image.uuid}`), 404)
    await purged(image)
    const full = await fetchPath(`/live/dbi/in/full/${copiedImage.uuid}`)
    assert.equal(full.status, 200)
    assert.equal(full.bytes.length, image.filesize)
    // The copy's files are its own in its book: counted (ic) and by id (ii).
    const targetBook = { ...target, session: book.session }
    for (const smidOfCopy of [copied.createMessageId, moved.createMessageId]) {
      const first = await statusAt(`/live/dbi/ic/tb/${target.b_o}/${target.b_c}/${smidOfCopy}/1`, {
        session: book.session,
      })
      assert.equal(first, 200, `copy ${smidOfCopy}`)
    }
    assert.equal(
      await statusAt(`/live/dbi/ii/tb/${target.b_o}/${target.b_c}/${copiedImage.id}`, {
        session: targetBook.session,
      }),
      200
    )
  })

  test('a deleted table row and a file taken out of a cell: 404 and bytes removed, the rest kept', async ({
    assert,
  }) => {
    const book = await makeBook()
    const call = caller(book.session)
    const { catId, fieldId } = await filesTable(book)
    const first = ok(
      await upload(
        book.session,
        { rowId: 'tmpA', fieldId },
        { bytes: await files.png(), name: 'a.png' }
      )
    )
    const rowId = first.row_id
    const second = ok(
      await upload(book.session, { rowId, fieldId }, { bytes: files.pdf(), name: 'b.pdf' })
    )
    const other = ok(
      await upload(
        book.session,
        { rowId: 'tmpB', fieldId },
        { bytes: await files.jpeg(), name: 'c.jpg' }
      )
    )
    assert200(await statusAt(`/live/dbi/in/tb/${first.uuid}`))

    // The cell's value replaced by a list without the first file.
    const cell = await cellValue(book, catId, fieldId, rowId)
    assert.lengthOf(cell, 2)
    ok(
      await call('updateTableValue', {
        b_o: book.b_o,
        rowId,
        fieldId,
        value: JSON.stringify(cell.filter((item: any) => item.uuid === second.uuid)),
      })
    )
    const removed = await statuses(book, first)
    assert.deepEqual(removed, all(removed, 404))
    await purged(first)
    const kept = await statuses(book, second)
    assert.deepEqual(kept, all(kept, 200))

    // The other row deleted.
    ok(await call('deleteTableRow', { b_o: book.b_o, rowId: other.row_id }))
    const deleted = await statuses(book, other)
    assert.deepEqual(deleted, all(deleted, 404))
    await purged(other)
    assert.equal(await statusAt(`/live/dbi/in/full/${second.uuid}`), 200)
  })

  test('a deleted field and a deleted table: the files of their cells answer 404 and go', async ({
    assert,
  }) => {
    const book = await makeBook()
    const call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const table = ok(await call('createTable', { ...base, name: 'Albums', code: 'albums' }))
    const field = (name: string) =>
      call('createField', { b_o: book.b_o, catId: table.catId, name, type: 'files' })
    const photos = ok(await field('Photos')).fieldId
    const scans = ok(await field('Scans')).fieldId
    const photo = ok(
      await upload(
        book.session,
        { rowId: 'tmpP', fieldId: photos },
        { bytes: await files.png(), name: 'p.png' }
      )
    )
    const scan = ok(
      await upload(
        book.session,
        { rowId: photo.row_id, fieldId: scans },
        { bytes: files.pdf(), name: 's.pdf' }
      )
    )
    assert200(await statusAt(`/live/dbi/in/tb/${photo.uuid}`))

    ok(await call('deleteField', { b_o: book.b_o, fieldId: photos }))
    const gone = await statuses(book, photo)
    assert.deepEqual(gone, all(gone, 404))
    await purged(photo)
    const kept = await statuses(book, scan)
    assert.deepEqual(kept, all(kept, 200))

    ok(await call('deleteTable', { b_o: book.b_o, catId: table.catId }))
    const after = await statuses(book, scan)
    assert.deepEqual(after, all(after, 404))
    await purged(scan)
  })

  test('a deleted book: every file of it answers 404 and its bytes go', async ({ assert }) => {
    const { book, smid, image, doc } = await messageWithFiles()
    const books = await app.container.make(BookService)
    await books.delete(ownerActor(book) as any, book.b_o, book.b_c)
    for (const file of [image, doc]) {
      const after = await statuses(book, file, smid)
      assert.deepEqual(after, all(after, 404))
    }
    await purged(image)
    await purged(doc)
  })
})
