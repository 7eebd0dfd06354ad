import { test } from '@japa/runner'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import { hasRedis, onMysql } from '#tests/helpers/database'
import { rowTableName } from '#plugins/tables/lib/field_types'
import { caller, makeBook, ok } from '#plugins/tables/tests/helpers/tables'
import { startQuire, type QuireProcess } from '../../../bench/lib/quire_process.js'
import { callerOn } from '#tests/helpers/server_caller'

/**
 * A Quire process killed with SIGKILL in the middle of a burst of writes on
 * MariaDB + Redis, then restarted on the same database: every acknowledged
 * write is there and whole, no write is half there, and the stamps handed to
 * clients are above every stored stamp within seconds (a dead instance's
 * in-flight stamps are reclaimed by heartbeat, not by a lease).
 */

const WORKERS = 6
/** Acknowledged writes before the kill (requests are still in flight then). */
const KILL_AFTER = 150
const UPDATE_POOL = 400
const PAD = 'x'.repeat(300)
const RESTAMP_BOUND_MS = 10_000

const needs = () =>
  !onMysql() || !hasRedis() ? 'needs DB_CONNECTION=mysql and REDIS_HOST (skipped)' : null

interface Acked {
  messages: { uuid: string; msg: string; sstamp: number; smid: number; withEvent: boolean }[]
  /** Rows created by createOrUpdateTableRows: one write, two rows, four cells. */
  rowPairs: { tag: string; ids: number[] }[]
  /** Cells set by updateTableValue, one row each. */
  cells: { rowId: number; value: string }[]
}

test.group('crash: SIGKILL mid-burst, then restart (MariaDB + Redis)', () => {
  test('every acknowledged write survives whole; stamps move past every stored one within 10 s', async ({
    assert,
    cleanup,
  }) => {
    // The world, through the suite's own server (same database and Redis).
    const book = await makeBook()
    const setup = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    const table = ok(
      await setup('createTable', {
        ...base,
        name: 'Crash',
        code: `crash${Date.now().toString(36)}`,
        fields: JSON.stringify([
          { name: 'Tag', type: 'shorttext' },
          { name: 'Part', type: 'integer' },
        ]),
      })
    )
    const catId = Number(table.catId)
    const meta = ok(await setup('getBookTables', { ...base, includeFields: 'true' }))
    const fields = meta.bookTables.categories.find((category: any) => category.id === catId).fields
    const [tagField, partField] = fields.map((field: any) => Number(field.id))
    const pool = ok(
      await setup('createOrUpdateTableRows', {
        b_o: book.b_o,
        catId,
        rows: JSON.stringify(
          Object.fromEntries(
            Array.from({ length: UPDATE_POOL }, (_, index) => [
              `tmp${index}`,
              { [tagField]: 'pool', [partField]: '0' },
            ])
          )
        ),
      })
    )
    const poolIds: number[] = pool.newRows.map((row: any) => Number(row.id))
    assert.lengthOf(poolIds, UPDATE_POOL)

    const env = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'quire-crash-')),
    }
    let server: QuireProcess = await startQuire(env)
    cleanup(() => server.stop())
    server.child.stdout?.resume()

    // The burst: every acknowledged write is recorded, nothing else.
    const acked: Acked = { messages: [], rowPairs: [], cells: [] }
    let count = 0
    let killed = false
    const call = callerOn(server.url, book.session)
    const worker = async (index: number) => {
      for (let step = 0; !killed; step++) {
        const tag = `w${index}s${step}`
        try {
          switch (step % 3) {
            case 0: {
              const uuid = randomUUID()
              const msg = `${tag}:${PAD}:end`
              // Every other message carries an event: two tables written in one transaction.
              const withEvent = step % 2 === 0
              const event = withEvent
                ? JSON.stringify({
                    eventStart: '2031-01-01T10:00:00Z',
                    eventEnd: '2031-01-01T11:00:00Z',
                  })
                : undefined
              const answer = await call('sendMsg', {
                ...base,
                msg,
                uuid,
                ...(event ? { event } : {}),
              })
              if (answer.status !== 'ok') throw new Error(JSON.stringify(answer))
              acked.messages.push({
                uuid,
                msg,
                sstamp: Number(answer.sstamp),
                smid: Number(answer.createMessageId),
                withEvent,
              })
              break
            }
            case 1: {
              const answer = await call('createOrUpdateTableRows', {
                b_o: book.b_o,
                catId,
                rows: JSON.stringify({
                  tmpA: { [tagField]: tag, [partField]: '1' },
                  tmpB: { [tagField]: tag, [partField]: '2' },
                }),
              })
              if (answer.status !== 'ok') throw new Error(JSON.stringify(answer))
              acked.rowPairs.push({ tag, ids: answer.newRows.map((row: any) => Number(row.id)) })
              break
            }
            default: {
              // A row of the pool no other write touches: its value is this write's, or the pool's.
              const slice = Math.floor(UPDATE_POOL / WORKERS)
              if (Math.floor(step / 3) >= slice) break
              const rowId = poolIds[index * slice + Math.floor(step / 3)]
              const value = `${tag}-cell`
              const answer = await call('updateTableValue', {
                b_o: book.b_o,
                rowId,
                fieldId: tagField,
                value,
              })
              if (answer.status !== 'ok') throw new Error(JSON.stringify(answer))
              acked.cells.push({ rowId, value })
            }
          }
        } catch (error) {
          if (killed) return // the server went away under this request: not acknowledged
          throw error
        }
        if (++count === KILL_AFTER) {
          killed = true
          server.child.kill('SIGKILL')
        }
      }
    }
    const died = new Promise((resolve) => server.child.once('exit', resolve))
    await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)))
    await died
    assert.equal(server.child.signalCode, 'SIGKILL')

    // Restart on the same database and Redis.
    server = await startQuire(env)
    server.child.stdout?.resume()
    const restartedAt = Date.now()
    const after = callerOn(server.url, book.session)

    // Stamps: the first acks after the restart go above every stored stamp, within seconds.
    const stored = async () => {
      const [messages, rows] = await Promise.all([
        db.from('book_messages').max('sstamp as top').first(),
        db.from(rowTableName(catId)).max('sstamp as top').first(),
      ])
      return Math.max(Number(messages?.top ?? 0), Number(rows?.top ?? 0))
    }
    let passed = false
    let last: Record<string, any> = {}
    let highest = 0
    while (Date.now() - restartedAt < RESTAMP_BOUND_MS) {
      highest = await stored()
      const uuid = randomUUID()
      last = await after('sendMsg', { ...base, msg: 'after the restart', uuid })
      assert.equal(last.status, 'ok', JSON.stringify(last))
      // The ack's stamp covers its own message too (never below it).
      const own = await db.from('book_messages').where({ book_id: book.id, uuid }).first()
      if (Number(last.sstamp) > highest && Number(last.sstamp) >= Number(own.sstamp)) {
        passed = true
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    assert.isTrue(
      passed,
      `ack stamp ${last.sstamp} still not above the stored ${highest} (or below its own message's) ${RESTAMP_BOUND_MS} ms after the restart`
    )

    // Messages: every acknowledged one, whole; none half there.
    assert.isAbove(acked.messages.length, 0)
    const messages = await db
      .from('book_messages')
      .where('book_id', book.id)
      .select('smid', 'uuid', 'msg', 'sstamp', 'del', 'has_event')
    const events = await db.from('book_events').where('book_id', book.id).select('smid')
    const eventSmids = new Set(events.map((row) => Number(row.smid)))
    const byUuid = new Map(messages.map((row) => [row.uuid, row]))
    for (const message of acked.messages) {
      const row = byUuid.get(message.uuid)
      assert.exists(row, `acknowledged message ${message.uuid} is missing`)
      assert.equal(row.msg, message.msg)
      assert.equal(Number(row.smid), message.smid)
      assert.isFalse(Boolean(row.del))
      assert.equal(eventSmids.has(message.smid), message.withEvent, `event of ${message.smid}`)
    }
    // Acknowledged or not: a message is whole, and has its event exactly when it says so.
    for (const row of messages) {
      if (row.msg === 'after the restart') continue
      assert.match(row.msg, new RegExp(`^w\\d+s\\d+:${PAD}:end$`), 'a message is half written')
      assert.equal(Boolean(row.has_event), eventSmids.has(Number(row.smid)), `message ${row.smid}`)
    }
    assert.isTrue(
      [...eventSmids].every((smid) => messages.some((row) => Number(row.smid) === smid)),
      'an event without its message'
    )

    // Rows, as a client reads them from the restarted server.
    const values = ok(
      await after('getTableValues', { catId, format: 'diff_ready_rows', maxRows: 100_000 })
    )
    const rows = values.tableValues.rows as Record<string, Record<string, any>>
    for (const pair of acked.rowPairs) {
      assert.lengthOf(pair.ids, 2)
      for (const id of pair.ids) assert.equal(rows[id]?.[tagField], pair.tag, `row ${id}`)
      assert.sameMembers(
        pair.ids.map((id) => String(rows[id]?.[partField])),
        ['1', '2'],
        `rows of ${pair.tag}`
      )
    }
    // Any write of two rows (acknowledged or not) is there with both rows and all four cells, or not at all.
    const groups = new Map<string, string[]>()
    for (const row of Object.values(rows)) {
      const tag = String(row[tagField] ?? '')
      if (!/^w\d+s\d+$/.test(tag)) continue
      groups.set(tag, [...(groups.get(tag) ?? []), String(row[partField])])
    }
    for (const [tag, parts] of groups) assert.sameMembers(parts, ['1', '2'], `rows of ${tag}`)
    for (const cell of acked.cells) {
      assert.equal(rows[cell.rowId]?.[tagField], cell.value, `cell of row ${cell.rowId}`)
    }
    assert.isAbove(acked.rowPairs.length + acked.cells.length, 0)
  })
    .timeout(300_000)
    .skip(Boolean(needs()), needs() ?? undefined)
})
