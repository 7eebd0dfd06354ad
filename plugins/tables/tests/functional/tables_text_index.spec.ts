import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { attached, ensureSocketEndpoint } from '#tests/functional/socket/socket_client'
import { isMysql } from '#core/native_sql'
import { pool } from '#tests/helpers/pool'
import settings from '#core/settings/main'
import { rowTableName } from '../../lib/field_types.js'
import { FilterCompiler, type FilterGroupSpec } from '../../lib/filter_compiler.js'
import { MetaService } from '../../services/meta_service.js'
import {
  checkTextIndex,
  createTextIndex,
  dropTextIndexes,
  forgetTextIndexes,
  indexedColumns,
  planTextIndex,
  textIndexName,
} from '../../services/text_index.js'
import { gramTableName } from '../../services/text_index_mysql.js'
import TablesIndexText from '../../commands/tables_index_text.js'
import {
  addField,
  addRows,
  caller,
  eventually,
  makeBook,
  ok,
  type Call,
} from '../helpers/tables.js'

/**
 * Substring search by index (services/text_index.ts): the index must answer exactly what the
 * scan answers, on the same data, and stay in step with every write path. Both databases have
 * one (SQLite: FTS5 trigrams; MariaDB: gram tables, text_index_mysql.ts); on MariaDB the index
 * is also compared with the scan under other collations of the column.
 */

/** A deterministic generator (mulberry32): a failure replays with the same data. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Pieces of text that exercise LIKE's case rules, accents, wildcards and the FTS5 syntax. */
const PIECES = [
  'a',
  'b',
  'c',
  'A',
  'B',
  'C',
  'ab',
  'abc',
  'ABC',
  'aBc',
  'é',
  'É',
  'e',
  'E',
  'ß',
  'ss',
  '\u212A', // KELVIN SIGN: FTS5 folds it to k, LIKE does not
  'k',
  'K',
  'İ',
  'i',
  'I',
  '%',
  '_',
  '!',
  '"',
  "'",
  ' ',
  '😀',
  'x',
  'y',
  'z',
  '*',
  '^',
  '-',
]

async function fixture() {
  const book = await makeBook()
  const call = caller(book.session)
  const catId = ok(await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Texts' }))
    .catId as number
  const name = await addField(call, catId, 'Name', 'shorttext')
  const notes = await addField(call, catId, 'Notes', 'mediumtext')
  const qty = await addField(call, catId, 'Qty', 'integer')
  return { book, call, catId, name, notes, qty }
}
type Fixture = Awaited<ReturnType<typeof fixture>>

const categoryOf = async (catId: number) => {
  const meta = await app.container.make(MetaService)
  return (await meta.loadCategory(catId))!
}

const groupOf = (fieldId: number, predicate: string, operand: unknown): FilterGroupSpec => ({
  operator: 'and',
  filters: [{ field_id: fieldId, filter_type: 'text', json: { predicate, operand } }],
})

/** The row ids getTableValues answers for one filter (over HTTP: the index where it answers). */
async function viaApi(call: Call, catId: number, group: FilterGroupSpec) {
  const answer = ok(
    await call('getTableValues', {
      catId,
      format: 'diff_ready_rows',
      maxRows: 5000,
      filterRowIds: JSON.stringify({ applyViewFilters: { filterGroup: group } }),
    })
  )
  return Object.keys(answer.tableValues.rows)
    .map(Number)
    .sort((a, b) => a - b)
}

/** The row ids the scan selects for the same filter: the compiler without a text index plan. */
async function viaScan(catId: number, group: FilterGroupSpec) {
  const category = await categoryOf(catId)
  const compiled = new FilterCompiler(category.fields, { userCode: null }).compile(group)
  const query = db.from(`${rowTableName(catId)} as t`).select('t.id')
  if (compiled.where) query.whereRaw(`(${compiled.where.sql})`, compiled.where.bindings as any[])
  const rows = await query
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b)
}

/** The integrity check of every text index of the table (FTS5's; MariaDB: grams both ways). */
async function assertInStep(assert: any, catId: number) {
  const columns = await indexedColumns(catId)
  assert.isAbove(columns.size, 0)
  for (const column of columns) await checkTextIndex(catId, column)
}

const indexCount = (catId: number) => indexedColumns(catId).then((columns) => columns.size)

/** How many of the filter's predicates the text index would answer now. */
const plannedCount = async (catId: number, filter: FilterGroupSpec) => {
  const { fields } = await categoryOf(catId)
  const plan = await planTextIndex(fields, filter)
  return plan.size
}

const columnOf = async (catId: number, fieldId: number) =>
  categoryOf(catId).then(
    (category) => category.fields.find((field) => field.id === fieldId)!.column!
  )

test.group('tables: text index answers as the scan does', (group) => {
  let fx: Fixture
  let texts: string[]
  group.setup(async () => {
    fx = await fixture()
    const next = random(23)
    const piece = () => PIECES[Math.floor(next() * PIECES.length)]
    texts = Array.from({ length: 160 }, () =>
      Array.from({ length: Math.floor(next() * 10) }, piece).join('')
    )
    texts.push('', 'needle in a haystack', 'Straße Ökonom ÉCOLE école', '\u212Aelvin key KEY')
    const long = `${'abcxyz'.repeat(3000)}needle${'é'.repeat(2000)}`
    const rows: Record<string, unknown>[] = texts.map((text, i) => ({
      [fx.name]: text,
      [fx.notes]: i % 7 === 0 ? long : `${text} ${texts[(i * 13) % texts.length]}`,
      [fx.qty]: i,
    }))
    rows.push({ [fx.qty]: -1 }) // no text at all: null cells
    // Digit runs: MariaDB's index also holds their 4-character windows.
    for (const digits of [
      'order 1234567',
      '１２３４５６７ x',
      'a12341234b',
      '0000 00000',
      '98765 4321 ¹²³⁴',
    ])
      rows.push({ [fx.name]: digits, [fx.notes]: `${digits} ${digits}`, [fx.qty]: rows.length })
    for (let start = 0; start < rows.length; start += 50)
      await addRows(fx.call, rows.slice(start, start + 50))
  })

  test('contains, begins-with and ends-with: the same rows through the index and by scan', async ({
    assert,
  }) => {
    const next = random(5)
    const patterns = new Set<string>([
      'abc',
      'ABC',
      'aBC',
      '%%%',
      '%_!',
      '___',
      '!!!',
      '"ab',
      'a"b',
      '"""',
      '\u212Aab',
      'kab',
      'KEY',
      'key',
      'éÉe',
      'ÉCOLE',
      'école',
      'ss ',
      'ßs',
      '😀😀a',
      'ab\u0000c',
      'a',
      'ab',
      'é',
      'needle',
      'NEEDLE',
      'xyz',
      'éé',
      'abcxyzabcxyzabcxyz',
      'zzzz-no-such',
      '*ab',
      '^ab',
      'a b',
      'NEAR',
      'AND',
      'a OR b',
      'x:y',
      '1231',
      '1234',
      '2341',
      '１２３４',
      '4567',
      '00000',
      '765 4',
      '¹²³',
    ])
    while (patterns.size < 110) {
      const text = Array.from(texts[Math.floor(next() * texts.length)])
      if (text.length < 3) continue
      const length = 3 + Math.floor(next() * 3)
      const start = Math.floor(next() * Math.max(1, text.length - length))
      const slice = text.slice(start, start + length)
      patterns.add(
        slice.map((char) => (next() < 0.5 ? char.toUpperCase() : char.toLowerCase())).join('')
      )
    }
    const { fields } = await categoryOf(fx.catId)
    let indexed = 0
    let matched = 0
    for (const pattern of patterns) {
      for (const predicate of ['contains', 'begins_with', 'ends_with']) {
        for (const fieldId of [fx.name, fx.notes]) {
          const filter = groupOf(fieldId, predicate, pattern)
          const expected = await viaScan(fx.catId, filter)
          const actual = await viaApi(fx.call, fx.catId, filter)
          assert.deepEqual(
            actual,
            expected,
            `${predicate} ${JSON.stringify(pattern)} on ${fieldId}`
          )
          const plan = await planTextIndex(fields, filter)
          if (plan.size > 0) indexed++
          if (expected.length > 0) matched++
        }
      }
    }
    // The comparison means something: most searches went through the index, many found rows.
    assert.isAbove(indexed, 500)
    assert.isAbove(matched, 300)
  }).timeout(120_000)

  test('getReferenceFieldValues searches through the index with the same answer', async ({
    assert,
  }) => {
    const other = ok(
      await fx.call('createTable', { b_o: fx.book.b_o, b_c: fx.book.b_c, name: 'Refs' })
    ).catId as number
    const link = await addField(fx.call, other, 'Text', 'link', { linkCatId: fx.catId })
    for (const search of ['abc', 'KEY', 'needle', 'ÉCOLE', '%_!', 'ab', '"ab']) {
      const answer = ok(
        await fx.call('getReferenceFieldValues', {
          b_o: fx.book.b_o,
          fieldId: link,
          search_string: search,
          maxRows: 1000,
        })
      )
      const expected = await viaScan(fx.catId, groupOf(fx.name, 'contains', search))
      assert.deepEqual(
        answer.values.map((value: any) => value.id).sort((a: number, b: number) => a - b),
        expected,
        search
      )
      assert.equal(answer.total, expected.length)
    }
  })

  test('bad patterns answer as the scan does, never a 500', async ({ assert }) => {
    for (const operand of [
      { nested: ['x'] },
      ['abc', 'd'],
      '"'.repeat(300),
      'x'.repeat(20_000),
      '\u0000\u0000\u0000',
      '\ud800ab',
      12345,
      null,
    ]) {
      const filter = groupOf(fx.name, 'contains', operand)
      assert.deepEqual(await viaApi(fx.call, fx.catId, filter), await viaScan(fx.catId, filter))
    }
  })
})

test.group('tables: text index when every gram of the pattern is common', () => {
  test('the rows holding all of them are few: the index answers, as the scan does', async ({
    assert,
  }) => {
    const fx = await fixture()
    // 'abcdef': each of its grams is in more than 1,000 rows (abc and bcd in the 'abcd' rows,
    // cde and def in the 'cdef' rows), all of them in two rows only.
    const rows = [
      ...Array.from({ length: 1050 }, (_, i) => ({ [fx.name]: `abcd ${i}` })),
      ...Array.from({ length: 1050 }, (_, i) => ({ [fx.name]: `CDEF ${i}` })),
      { [fx.name]: 'xabcdefx' },
      { [fx.name]: 'ABCDEF' },
      { [fx.name]: 'abcd cdef' },
    ]
    for (let start = 0; start < rows.length; start += 500)
      await addRows(fx.call, rows.slice(start, start + 500))
    for (const predicate of ['contains', 'begins_with', 'ends_with']) {
      const filter = groupOf(fx.name, predicate, 'abcdef')
      const expected = await viaScan(fx.catId, filter)
      assert.lengthOf(expected, predicate === 'contains' ? 2 : 1, predicate)
      assert.equal(await plannedCount(fx.catId, filter), 1, predicate)
      assert.deepEqual(await viaApi(fx.call, fx.catId, filter), expected, predicate)
    }
    // A pattern the rows of one word hold: more than 1,000 rows, the scan answers.
    const common = groupOf(fx.name, 'contains', 'bcd')
    assert.equal(await plannedCount(fx.catId, common), 0)
    assert.lengthOf(await viaScan(fx.catId, common), 1053)
    // That verdict is remembered a few seconds (a grid paging through the search probes once):
    // the pattern made rare meanwhile is still scanned, with the same answer, until forgotten.
    const column = await columnOf(fx.catId, fx.name)
    await db.from(rowTableName(fx.catId)).where(column, 'like', 'abcd %').delete()
    assert.equal(await plannedCount(fx.catId, common), 0)
    const rare = await viaScan(fx.catId, common)
    assert.lengthOf(rare, 2) // xabcdefx, ABCDEF (abcd cdef went with the abcd rows)
    assert.deepEqual(await viaApi(fx.call, fx.catId, common), rare)
    forgetTextIndexes(fx.catId)
    assert.equal(await plannedCount(fx.catId, common), 1)
    assert.deepEqual(await viaApi(fx.call, fx.catId, common), rare)
  }).timeout(60_000)
})

test.group('tables: text index kept in step by every write', () => {
  test('bulk, updateTableValue, createOrUpdateTableRow, socket 13, rollback, deletes', async ({
    assert,
    cleanup,
  }) => {
    const fx = await fixture()
    const [a, b, c] = await addRows(fx.call, [
      { [fx.name]: 'alpha one', [fx.notes]: 'first' },
      { [fx.name]: 'bravo two' },
      { [fx.name]: 'charlie three', [fx.notes]: 'third' },
    ])
    assert.sameMembers(
      [...(await indexedColumns(fx.catId))],
      [await columnOf(fx.catId, fx.name), await columnOf(fx.catId, fx.notes)]
    )
    const finds = async (text: string) =>
      viaApi(fx.call, fx.catId, groupOf(fx.name, 'contains', text))
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('bravo'), [b])

    ok(await fx.call('updateTableValue', { rowId: String(a), fieldId: fx.name, value: 'delta' }))
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('alpha'), [])
    assert.deepEqual(await finds('delta'), [a])

    ok(
      await fx.call('createOrUpdateTableRow', {
        rowId: String(b),
        fieldValues: JSON.stringify({ [fx.name]: '', [fx.notes]: 'now notes' }),
      })
    )
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('bravo'), [])

    await ensureSocketEndpoint()
    const socket = await attached(fx.book.session)
    cleanup(async () => {
      await socket.close()
    })
    socket.send({ type: 13, rowId: String(c), fieldId: fx.name, value: 'echo by socket' })
    await eventually(() => finds('echo by').then((ids) => ids.length === 1))
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('charlie'), [])

    // Roll row c back before the socket's change: its old text is searchable again.
    const history = ok(
      await fx.call('getRowHistory', { b_o: fx.book.b_o, rowId: String(c), fieldId: fx.name })
    )
    ok(
      await fx.call('rollBackBeforeChange', {
        b_o: fx.book.b_o,
        rowId: String(c),
        changeId: history.changes[0].id,
      })
    )
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('charlie'), [c])
    assert.deepEqual(await finds('echo by'), [])

    ok(await fx.call('deleteTableRow', { rowId: String(a) }))
    ok(await fx.call('deleteTableRows', { b_o: fx.book.b_o, rows: JSON.stringify([c]) }))
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await finds('delta'), [])
    assert.deepEqual(await finds('charlie'), [])
  }).timeout(60_000)

  test('a field type change or deletion drops its index; the others keep working', async ({
    assert,
  }) => {
    const fx = await fixture()
    const [row] = await addRows(fx.call, [{ [fx.name]: 'kilo lima', [fx.notes]: 'mike november' }])
    const nameColumn = await columnOf(fx.catId, fx.name)
    const notesColumn = await columnOf(fx.catId, fx.notes)

    // shorttext -> integer: the old column's index goes, none for a number.
    ok(await fx.call('updateField', { fieldId: fx.name, type: 'integer' }))
    ok(await fx.call('deleteField', { fieldId: fx.qty }))
    const columns = await indexedColumns(fx.catId)
    assert.notInclude([...columns], nameColumn)
    assert.include([...columns], notesColumn)
    // No table or trigger of the dropped index is left.
    const left = isMysql()
      ? await db.rawQuery(
          `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
            UNION ALL SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE ?`,
          [`tt_${fx.catId}_tri_${nameColumn}`, `tt\\_${fx.catId}\\_tri\\_${nameColumn}\\_%`]
        )
      : await db.rawQuery('SELECT name FROM sqlite_master WHERE name LIKE ?', [
          `${textIndexName(fx.catId, nameColumn)}%`,
        ])
    assert.lengthOf(isMysql() ? left[0] : left, 0)
    // The table was altered twice: the remaining index still follows writes.
    ok(await fx.call('updateTableValue', { rowId: String(row), fieldId: fx.notes, value: 'oscar' }))
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await viaApi(fx.call, fx.catId, groupOf(fx.notes, 'contains', 'osc')), [row])

    // mediumtext -> shorttext: a new column, indexed, filled by the conversion.
    ok(await fx.call('updateField', { fieldId: fx.notes, type: 'shorttext' }))
    const converted = await columnOf(fx.catId, fx.notes)
    assert.sameMembers([...(await indexedColumns(fx.catId))], [converted])
    await assertInStep(assert, fx.catId)
    assert.deepEqual(await viaApi(fx.call, fx.catId, groupOf(fx.notes, 'contains', 'osc')), [row])

    ok(await fx.call('deleteField', { fieldId: fx.notes }))
    assert.equal(await indexCount(fx.catId), 0)
    ok(await fx.call('deleteTable', { b_o: fx.book.b_o, catId: fx.catId }))
  })

  test('tables:index-text builds the indexes of an existing table (and --drop removes them)', async ({
    assert,
  }) => {
    const fx = await fixture()
    const ids = await addRows(
      fx.call,
      Array.from({ length: 30 }, (_, i) => ({ [fx.name]: `row ${i} papa`, [fx.notes]: `n${i}` }))
    )
    const ace = await app.container.make('ace')
    // A table indexed before this feature existed: no index.
    await dropTextIndexes(fx.catId)
    assert.equal(await indexCount(fx.catId), 0)
    const filter = groupOf(fx.name, 'contains', 'row 1')
    assert.equal(await plannedCount(fx.catId, filter), 0)
    const expected = await viaScan(fx.catId, filter)
    assert.lengthOf(expected, 11) // row 1, row 10 ... row 19

    const command = await ace.create(TablesIndexText, [String(fx.catId)])
    await command.exec()
    assert.notEqual(command.exitCode, 1)
    assert.equal(await indexCount(fx.catId), 2)
    await assertInStep(assert, fx.catId)
    assert.equal(await plannedCount(fx.catId, filter), 1)
    assert.deepEqual(await viaApi(fx.call, fx.catId, filter), expected)
    // Later writes follow.
    ok(await fx.call('updateTableValue', { rowId: String(ids[0]), fieldId: fx.name, value: 'q' }))
    await assertInStep(assert, fx.catId)
    assert.lengthOf(await viaApi(fx.call, fx.catId, groupOf(fx.name, 'contains', 'papa')), 29)

    const again = await ace.create(TablesIndexText, [String(fx.catId)])
    await again.exec()
    assert.notEqual(again.exitCode, 1) // already indexed: nothing rebuilt
    assert.isFalse(await createTextIndex(fx.catId, await columnOf(fx.catId, fx.name)))

    const drop = await ace.create(TablesIndexText, [String(fx.catId), '--drop'])
    await drop.exec()
    assert.equal(await indexCount(fx.catId), 0)
    assert.lengthOf(await viaApi(fx.call, fx.catId, groupOf(fx.name, 'contains', 'papa')), 29)

    // --field: only that field's index is built, then dropped.
    const one = await ace.create(TablesIndexText, [String(fx.catId), `--field=${fx.notes}`])
    await one.exec()
    assert.notEqual(one.exitCode, 1)
    assert.deepEqual([...(await indexedColumns(fx.catId))], [await columnOf(fx.catId, fx.notes)])
    await assertInStep(assert, fx.catId)
    const both = await ace.create(TablesIndexText, [String(fx.catId)])
    await both.exec()
    assert.equal(await indexCount(fx.catId), 2)
    const dropOne = await ace.create(TablesIndexText, [
      String(fx.catId),
      '--drop',
      `--field=${fx.notes}`,
    ])
    await dropOne.exec()
    assert.deepEqual([...(await indexedColumns(fx.catId))], [await columnOf(fx.catId, fx.name)])

    const bad = await ace.create(TablesIndexText, ['nope'])
    await bad.exec()
    assert.equal(bad.exitCode, 1)
    const badField = await ace.create(TablesIndexText, [String(fx.catId), '--field=x'])
    await badField.exec()
    assert.equal(badField.exitCode, 1)
  })

  test('with the setting tables.textIndex off, a new text field gets none; the command builds it', async ({
    assert,
    cleanup,
  }) => {
    const fx = await fixture()
    await settings.update('tables.textIndex', false)
    cleanup(() => settings.update('tables.textIndex', null).then(() => {}))
    const city = await addField(fx.call, fx.catId, 'City', 'shorttext')
    const cityColumn = await columnOf(fx.catId, city)
    assert.notInclude([...(await indexedColumns(fx.catId))], cityColumn)
    // The fields made while it was on keep theirs; the new one is searched by scan, alike.
    assert.equal(await indexCount(fx.catId), 2)
    const [row] = await addRows(fx.call, [{ [city]: 'Quimper' }])
    const filter = groupOf(city, 'contains', 'imp')
    assert.equal(await plannedCount(fx.catId, filter), 0)
    assert.deepEqual(await viaApi(fx.call, fx.catId, filter), [row])

    const kernel = await app.container.make('ace')
    const command = await kernel.create(TablesIndexText, [String(fx.catId)])
    await command.exec()
    assert.notEqual(command.exitCode, 1)
    assert.include([...(await indexedColumns(fx.catId))], cityColumn)
    await assertInStep(assert, fx.catId)
    assert.equal(await plannedCount(fx.catId, filter), 1)
    assert.deepEqual(await viaApi(fx.call, fx.catId, filter), [row])
  })
})

/** The row ids the index-narrowed filter selects (the compiler with the text index's plan). */
async function viaIndex(catId: number, group: FilterGroupSpec) {
  const category = await categoryOf(catId)
  const textIndex = await planTextIndex(category.fields, group)
  const compiled = new FilterCompiler(category.fields, { userCode: null, textIndex }).compile(group)
  const query = db.from(`${rowTableName(catId)} as t`).select('t.id')
  if (compiled.where) query.whereRaw(`(${compiled.where.sql})`, compiled.where.bindings as any[])
  const rows = await query
  return { ids: rows.map((row) => Number(row.id)).sort((a, b) => a - b), planned: textIndex.size }
}

test.group('tables: text index under the column collations MariaDB may have', () => {
  /**
   * MariaDB's LIKE compares one character with one under the column's collation (case,
   * accents, and under utf8mb4_general_ci every 4-byte character alike); the gram table takes
   * the column's collation, so that a gram lookup is at least as loose. Each collation: the
   * column altered to it, the index rebuilt, rows written and rewritten to values the
   * collation deems equal (other case, trailing spaces, ß for ss), then every window of the
   * texts, in other cases too, searched by index and by scan.
   */
  test('index and scan select the same rows under each collation', async ({ assert }) => {
    if (!isMysql()) return
    const fx = await fixture()
    const column = await columnOf(fx.catId, fx.name)
    const [shown] = await db.rawQuery("SHOW COLLATION WHERE Charset = 'utf8mb4'")
    const available = new Set(shown.map((row: any) => String(row.Collation)))
    const collations = [
      'utf8mb4_general_ci',
      'utf8mb4_unicode_ci',
      'utf8mb4_unicode_520_ci',
      'utf8mb4_german2_ci',
      'utf8mb4_uca1400_ai_ci',
      'utf8mb4_uca1400_as_cs',
      'utf8mb4_bin',
    ].filter((name) => available.has(name))
    assert.isAtLeast(collations.length, 4)
    const texts = [
      'Straße',
      'STRASSE',
      'strasse ',
      'École élève',
      'ecole eleve',
      'ÉCOLE',
      '\u212Aelvin',
      'kelvin',
      '😀😁x',
      '😁😀x',
      '😀😀😀',
      'æble ÆBLE',
      'aeble',
      'İstanbul',
      'istanbul',
      'abc  ',
      'abc',
      'ab',
      'a',
      '',
      'x\u00ADyz',
      'xyz',
      'ǅemal dzemal',
      'Ärger aerger',
      'naïve naive',
      '%_!"\'',
      // Digit runs (their 4-character windows are grams too), in other scripts and forms.
      'order 1234567',
      '１２３４５６７',
      '12٣4 ¹²³⁴ ①②③④',
      'x98765y 0000',
      '123 1234 12345',
    ]
    const rows = await addRows(
      fx.call,
      texts.map((text, i) => ({ [fx.name]: text, [fx.qty]: i }))
    )
    await addRows(fx.call, [{ [fx.qty]: -1 }]) // a null name
    // Rewrites to values the default collation deems equal to the old ones, bytes differing.
    const rewrites: [number, string][] = [
      [0, 'strasse'],
      [1, 'Straße'],
      [15, 'ABC'],
      [16, 'abc   '],
      [5, 'école'],
      [8, '😁😁x'],
      [26, 'order １２３４５６７'],
      [29, 'x98765y 0001'],
    ]
    const windows = new Set<string>([
      'ss',
      'aße',
      'ASS',
      'ße ',
      'sse',
      'c  ',
      'bc ',
      '😂😂x',
      '😀😀x',
      'ael',
      'æbl',
      'DZE',
      'ǅem',
      'ärg',
      'aer',
      'ïve',
      'ive',
      'xyz',
      'x\u00ADy',
      '%_!',
      '_!"',
      '1234',
      '3456',
      '１２３４',
      '12345',
      '0000',
      '0001',
      '1234567',
    ])
    for (const text of [...texts, ...rewrites.map(([, value]) => value)]) {
      const chars = Array.from(text)
      for (let length = 3; length <= 5; length++)
        for (let start = 0; start + length <= chars.length; start++) {
          const window = chars.slice(start, start + length).join('')
          windows.add(window)
          windows.add(window.toUpperCase())
          windows.add(window.toLowerCase())
        }
    }
    const table = rowTableName(fx.catId)
    for (const collation of collations) {
      await dropTextIndexes(fx.catId)
      await db.rawQuery(
        `ALTER TABLE \`${table}\` MODIFY \`${column}\` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE ${collation} NULL`
      )
      await createTextIndex(fx.catId, column)
      for (const [index, value] of rewrites) {
        ok(
          await fx.call('updateTableValue', {
            rowId: String(rows[index]),
            fieldId: fx.name,
            value,
          })
        )
      }
      await assertInStep(assert, fx.catId)
      // The digit runs' 4-character windows are there (full-width ones included, under the
      // collations that deem them digits), so a number's search is driven by them.
      const [digitGrams] = await db.rawQuery(
        `SELECT gram FROM \`${gramTableName(fx.catId, column)}\` WHERE row_id = ? AND CHAR_LENGTH(gram) = 4 ORDER BY gram`,
        [rows[30]]
      )
      assert.deepEqual(
        digitGrams.map((row: any) => row.gram),
        ['1234', '2345'],
        collation
      )
      let planned = 0
      let found = 0
      const searches = [...windows].flatMap((window) =>
        ['contains', 'begins_with', 'ends_with'].map((predicate) => ({ window, predicate }))
      )
      // Four searches at once (reads only): 37 -> 27 s for the seven collations on MariaDB.
      const answers = await pool(searches, 4, async ({ window, predicate }) => {
        const filter = groupOf(fx.name, predicate, window)
        return {
          indexed: await viaIndex(fx.catId, filter),
          expected: await viaScan(fx.catId, filter),
        }
      })
      searches.forEach(({ window, predicate }, index) => {
        const { indexed, expected } = answers[index]
        assert.deepEqual(
          indexed.ids,
          expected,
          `${collation}: ${predicate} ${JSON.stringify(window)}`
        )
        planned += indexed.planned
        if (expected.length) found++
      })
      assert.isAbove(planned, windows.size * 2, collation)
      assert.isAbove(found, windows.size / 2, collation)
      // Put the texts back for the next collation.
      for (const [index] of rewrites)
        ok(
          await fx.call('updateTableValue', {
            rowId: String(rows[index]),
            fieldId: fx.name,
            value: texts[index],
          })
        )
    }
  }).timeout(180_000)
})
