import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { MediaNames } from '#plugins/media/services/media_names'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { files, upload } from '../helpers/media.js'

/** Runs `task` and counts the SQL statements on media_files it sent. */
async function mediaQueriesDuring(task: () => Promise<unknown>) {
  const clients = [db.connection().getReadClient(), db.connection().getWriteClient()]
  const seen = new Set<unknown>()
  let count = 0
  const listener = (query: { __knexQueryUid?: string; sql: string }) => {
    if (!query.sql.includes('media_files') || seen.has(query.__knexQueryUid)) return
    seen.add(query.__knexQueryUid)
    count++
  }
  for (const client of new Set(clients)) client.on('query', listener)
  try {
    await task()
  } finally {
    for (const client of new Set(clients)) client.off('query', listener)
  }
  return count
}

test.group('file lookups by name', () => {
  test('concurrent lookups of one name share one query; a forgotten one is not kept', async ({
    assert,
  }) => {
    const book = await makeBook()
    const base = { b_o: book.b_o, b_c: book.b_c }
    const smid = ok(await caller(book.session)('sendMsg', { ...base, msg: 'x' })).createMessageId
    const image = ok(
      await upload(book.session, { ...base, smid }, { bytes: await files.png(), name: 'a.png' })
    )
    const media = await app.container.make(MediaNames)
    media.forget([image.uuid])
    let rows: unknown[] = []
    const queries = await mediaQueriesDuring(async () => {
      rows = await Promise.all(Array.from({ length: 20 }, () => media.byName(image.uuid)))
    })
    assert.equal(queries, 1)
    for (const row of rows) assert.equal((row as any).uuid, image.uuid)
    // Cached now: no query at all.
    assert.equal(await mediaQueriesDuring(() => media.byName(image.uuid)), 0)

    // Forgotten while its lookup is under way: the answer is not kept.
    media.forget([image.uuid])
    const pending = media.byName(image.uuid)
    media.forget([image.uuid])
    await pending
    assert.equal(await mediaQueriesDuring(() => media.byName(image.uuid)), 1)
  })
})
