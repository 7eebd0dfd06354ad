import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { login } from '#tests/helpers/users'
import { rowTableName } from '../../lib/field_types.js'
import { ENCRYPTED_MASK, PASSWORD_GUESSES } from '../../services/field_encryption.js'
import {
  addField,
  addRows,
  caller,
  columnOf,
  errorCode,
  makeBook,
  ok,
  rowsOf,
  type Call,
} from '../helpers/tables.js'

const PASSWORD = 'correct horse battery staple'
const SECRET = 'Account 4242-SECRET'

/** A table with a plain field and an encrypted one; one row written unlocked, one empty row. */
async function fixture() {
  const book = await makeBook([{ right: 1 }, { right: 2 }])
  const call = caller(book.session)
  const catId = ok(await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Vault' }))
    .catId as number
  const plain = await addField(call, catId, 'Label', 'shorttext')
  const secret = await addField(call, catId, 'Secret', 'shorttext', undefined, {
    encrypted: 1,
    encryptionPassword: PASSWORD,
  })
  const unlock = JSON.stringify({ [secret]: PASSWORD })
  const [rowId, emptyRow] = await addRows(
    call,
    [{ [plain]: 'first', [secret]: SECRET }, { [plain]: 'second' }],
    { encryptedFieldPasswords: unlock }
  )
  return { book, call, catId, plain, secret, unlock, rowId, emptyRow }
}

type Fixture = Awaited<ReturnType<typeof fixture>>

/** The stored (sealed) value of the secret cell, as the database holds it. */
async function stored(fx: Fixture, rowId = fx.rowId) {
  const row = await db.from(rowTableName(fx.catId)).where('id', rowId).first()
  return row[`f${fx.secret}`] as string | null
}

/** The cells of a table keyed by row id then field id (the owner's view unless `call` says). */
async function cellsOf(fx: Fixture, extra: Record<string, unknown> = {}, call: Call = fx.call) {
  const rows = await rowsOf(call, fx.catId, extra)
  return (rowId: number, fieldId: number) => rows[String(rowId)][String(fieldId)]
}

const secretOf = async (fx: Fixture, extra: Record<string, unknown> = {}, call: Call = fx.call) =>
  (await cellsOf(fx, extra, call))(fx.rowId, fx.secret)

test.group('tables: encrypted fields', (group) => {
  let fx: Fixture
  group.each.setup(async () => {
    fx = await fixture()
  })

  test('values are stored sealed and read in clear only with the password', async ({ assert }) => {
    const sealed = await stored(fx)
    assert.match(sealed!, /^qe1:/)
    assert.notInclude(sealed!, 'SECRET')
    assert.isNull(await stored(fx, fx.emptyRow))

    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), SECRET)
    assert.equal(await secretOf(fx), ENCRYPTED_MASK)
    const masked = ok(await fx.call('getTableValues', { catId: fx.catId }))
    assert.deepEqual(columnOf(masked, fx.secret), [ENCRYPTED_MASK, null])
    assert.deepEqual(columnOf(masked, fx.plain), ['first', 'second'])
    // The structure says the field is encrypted, never how.
    const field = masked.tableValues.fields.find((candidate: any) => candidate.id === fx.secret)
    assert.isTrue(field.encrypted)
    const tables = JSON.stringify(
      ok(await fx.call('getBookTables', { b_o: fx.book.b_o, b_c: fx.book.b_c, includeFields: 1 }))
    )
    assert.include(tables, '"encrypted":true')
    assert.notInclude(tables, 'verifier')
    assert.notInclude(tables, 'salt')

    // The other reads that take encryptedFieldPasswords.
    const unlock = { encryptedFieldPasswords: fx.unlock }
    const subset = { catId: fx.catId, fieldIds: `[${fx.secret}]`, rowIds: `[${fx.rowId}]` }
    assert.deepEqual(
      ok(await fx.call('getTableValueSubset', { ...subset, ...unlock })).tableValues,
      [[SECRET]]
    )
    assert.deepEqual(ok(await fx.call('getTableValueSubset', subset)).tableValues, [
      [ENCRYPTED_MASK],
    ])
    const listed = ok(await fx.call('listTableRowsById', { catId: fx.catId, ...unlock }))
    assert.equal(columnOf(listed, fx.secret)[0], SECRET)
    const rows = ok(await fx.call('getTableRows', { catId: fx.catId, ...unlock })).rows
    assert.equal(rows[0].fields.Secret.value, SECRET)
    const lockedRows = ok(await fx.call('getTableRows', { catId: fx.catId })).rows
    assert.equal(lockedRows[0].fields.Secret.value, ENCRYPTED_MASK)
    // getNamedTableValues takes no passwords (spec 4.A.7): masked.
    ok(await fx.call('updateTable', { catId: fx.catId, code: 'vault' }))
    const named = ok(
      await fx.call('getNamedTableValues', { b_o: fx.book.b_o, b_c: fx.book.b_c, catCode: 'vault' })
    )
    assert.equal(columnOf(named, fx.secret)[0], ENCRYPTED_MASK)
  })

  test('unlocked writes: updateTableValue, createOrUpdateTableRow (answered in clear)', async ({
    assert,
  }) => {
    const before = await stored(fx)
    ok(
      await fx.call('updateTableValue', {
        rowId: fx.rowId,
        fieldId: fx.secret,
        value: 'changed',
        encryptedFieldPasswords: fx.unlock,
      })
    )
    assert.notEqual(await stored(fx), before)
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), 'changed')

    const created = ok(
      await fx.call('createOrUpdateTableRow', {
        catId: fx.catId,
        rowId: 'tmp1',
        fieldValues: JSON.stringify({ [fx.secret]: 'new row secret' }),
        encryptedFieldPasswords: fx.unlock,
      })
    )
    const newId = Number(created.newRows[0].id)
    assert.equal(created.rows[0].fields[String(fx.secret)].value, 'new row secret')
    assert.match((await stored(fx, newId))!, /^qe1:/)
    const rows = await rowsOf(fx.call, fx.catId, { encryptedFieldPasswords: fx.unlock })
    assert.equal(rows[String(newId)][String(fx.secret)], 'new row secret')
    // A sealed value belongs to its row: copied onto another row, it does not open.
    await db
      .from(rowTableName(fx.catId))
      .where('id', fx.emptyRow)
      .update({ [`f${fx.secret}`]: await stored(fx) })
    const copied = await rowsOf(fx.call, fx.catId, { encryptedFieldPasswords: fx.unlock })
    assert.equal(copied[String(fx.emptyRow)][String(fx.secret)], ENCRYPTED_MASK)
    // Clearing a cell also needs the password; the plain field needs none.
    ok(
      await fx.call('updateTableValue', {
        rowId: fx.rowId,
        fieldId: fx.secret,
        value: '',
        encryptedFieldPasswords: fx.unlock,
      })
    )
    assert.isNull(await stored(fx))
    ok(await fx.call('updateTableValue', { rowId: fx.rowId, fieldId: fx.plain, value: 'plain' }))
  })

  test('a write without the password, or with a wrong one, writes nothing', async ({ assert }) => {
    const before = await stored(fx)
    const count = async () =>
      db
        .from(rowTableName(fx.catId))
        .count('* as total')
        .first()
        .then((found) => Number(found.total))
    const rowsBefore = await count()
    const wrong = JSON.stringify({ [fx.secret]: 'not the password' })
    const cell = { rowId: fx.rowId, fieldId: fx.secret, value: 'x' }
    assert.equal(await errorCode(fx.call('updateTableValue', cell)), 'ENCRYPTED_FIELD_LOCKED')
    assert.equal(
      await errorCode(fx.call('updateTableValue', { ...cell, encryptedFieldPasswords: wrong })),
      'ENCRYPTION_PASSWORD_WRONG'
    )
    const fieldValues = JSON.stringify({ [fx.plain]: 'with', [fx.secret]: 'x' })
    assert.equal(
      await errorCode(
        fx.call('createOrUpdateTableRow', { catId: fx.catId, rowId: 'tmp1', fieldValues })
      ),
      'ENCRYPTED_FIELD_LOCKED'
    )
    assert.equal(
      await errorCode(
        fx.call('createOrUpdateTableRows', {
          rows: JSON.stringify({ tmp1: { [fx.plain]: 'a' }, tmp2: { [fx.secret]: 'b' } }),
        })
      ),
      'ENCRYPTED_FIELD_LOCKED'
    )
    assert.equal(
      await errorCode(
        fx.call('createOrUpdateTableRows', {
          rows: JSON.stringify({ [fx.rowId]: { [fx.plain]: 'a', [fx.secret]: 'b' } }),
          encryptedFieldPasswords: wrong,
        })
      ),
      'ENCRYPTION_PASSWORD_WRONG'
    )
    assert.equal(await stored(fx), before)
    assert.equal(await count(), rowsBefore)
    assert.equal((await cellsOf(fx))(fx.rowId, fx.plain), 'first')
    // A wrong password on a read unlocks nothing either.
    assert.equal(
      await errorCode(
        fx.call('getTableValues', { catId: fx.catId, encryptedFieldPasswords: wrong })
      ),
      'ENCRYPTION_PASSWORD_WRONG'
    )
  })

  test('bad encryptedFieldPasswords and bad createField / updateField input', async ({
    assert,
  }) => {
    const read = (encryptedFieldPasswords: unknown) =>
      errorCode(fx.call('getTableValues', { catId: fx.catId, encryptedFieldPasswords }))
    for (const bad of ['{', '[1]', '"text"', '42'])
      assert.equal(await read(bad), 'INVALID_PARAMETER', bad)
    assert.equal(await read(JSON.stringify({ 999999999: PASSWORD })), 'INVALID_PARAMETER')
    assert.equal(await read(JSON.stringify({ x: PASSWORD })), 'INVALID_PARAMETER')
    assert.equal(await read(JSON.stringify({ [fx.plain]: PASSWORD })), 'INVALID_PARAMETER')
    assert.equal(await read(JSON.stringify({ [fx.secret]: '' })), 'INVALID_PARAMETER')
    assert.equal(await read(JSON.stringify({ [fx.secret]: 5 })), 'INVALID_PARAMETER')
    const write = await fx.call('updateTableValue', {
      rowId: fx.rowId,
      fieldId: fx.secret,
      value: 'x',
      encryptedFieldPasswords: '{',
    })
    assert.equal(write.errorCode, 'INVALID_PARAMETER')
    assert.equal(write.field, 'encryptedFieldPasswords')

    const fields = () =>
      db
        .from('table_fields')
        .where('category_id', fx.catId)
        .count('* as n')
        .first()
        .then((found) => Number(found.n))
    const before = await fields()
    const create = (params: Record<string, unknown>) =>
      errorCode(
        fx.call('createField', { catId: fx.catId, name: 'More', type: 'shorttext', ...params })
      )
    assert.equal(await create({ encrypted: 1 }), 'MISSING_PARAMETER')
    assert.equal(await create({ encrypted: 1, encryptionPassword: '' }), 'MISSING_PARAMETER')
    assert.equal(
      await create({ encrypted: 1, encryptionPassword: 'x'.repeat(1025) }),
      'INVALID_PARAMETER'
    )
    assert.equal(
      await create({ type: 'integer', encrypted: 1, encryptionPassword: PASSWORD }),
      'INVALID_PARAMETER'
    )
    assert.equal(await fields(), before)
    const update = (params: Record<string, unknown>) =>
      errorCode(fx.call('updateField', { fieldId: fx.secret, ...params }))
    assert.equal(await update({ type: 'mediumtext' }), 'INVALID_PARAMETER')
    assert.equal(await update({ encrypted: 0 }), 'INVALID_PARAMETER')
    assert.equal(await update({ newEncryptionPassword: 'new one' }), 'MISSING_PARAMETER')
    assert.equal(
      await errorCode(
        fx.call('updateField', {
          fieldId: fx.plain,
          encryptionPassword: 'a',
          newEncryptionPassword: 'b',
        })
      ),
      'INVALID_PARAMETER'
    )
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), SECRET)
  })

  test('filters, sorts, groupings, pivots and lookups on an encrypted field are refused', async ({
    assert,
  }) => {
    const filterGroupOf = (filter: Record<string, unknown>) =>
      JSON.stringify({ operator: 'and', filters: [{ field_id: fx.secret, ...filter }] })
    const filter = filterGroupOf({
      filter_type: 'shorttext',
      json: { predicate: 'is', operand: SECRET },
    })
    const sort = filterGroupOf({ filter_type: 'sort', json: { predicate: 'asc' } })
    for (const filterGroup of [filter, sort]) {
      const answer = await fx.call('getTableValues', {
        catId: fx.catId,
        filterRowIds: JSON.stringify({
          applyViewFilters: { filterGroup: JSON.parse(filterGroup) },
        }),
        encryptedFieldPasswords: fx.unlock,
      })
      assert.equal(answer.errorCode, 'ENCRYPTED_FIELD_UNSEARCHABLE')
      assert.notInclude(JSON.stringify(answer), SECRET)
      assert.equal(
        await errorCode(fx.call('createView', { catId: fx.catId, name: 'By secret', filterGroup })),
        'ENCRYPTED_FIELD_UNSEARCHABLE'
      )
    }
    assert.equal(
      await errorCode(fx.call('getTablePivotValues', { catId: fx.catId, p_field_hz: fx.secret })),
      'ENCRYPTED_FIELD_UNSEARCHABLE'
    )
    const other = ok(
      await fx.call('createTable', { b_o: fx.book.b_o, b_c: fx.book.b_c, name: 'Refs' })
    ).catId as number
    const link = await addField(fx.call, other, 'Vault row', 'link', { linkCatId: fx.catId })
    assert.equal(
      await errorCode(
        fx.call('createField', {
          catId: other,
          name: 'Leak',
          type: 'lookup',
          options: JSON.stringify({ linkFieldId: link, targetFieldId: fx.secret }),
        })
      ),
      'ENCRYPTED_FIELD_UNSEARCHABLE'
    )
  })

  test('the password and the plaintext stay out of history, answers and stored settings', async ({
    assert,
  }) => {
    ok(
      await fx.call('updateTableValue', {
        rowId: fx.rowId,
        fieldId: fx.secret,
        value: 'second secret',
        encryptedFieldPasswords: fx.unlock,
      })
    )
    const history = ok(
      await fx.call('getRowHistory', {
        b_o: fx.book.b_o,
        rowId: String(fx.rowId),
        fieldId: fx.secret,
      })
    )
    assert.isAbove(history.total, 0)
    const text = JSON.stringify(history)
    for (const secret of [PASSWORD, SECRET, 'second secret']) assert.notInclude(text, secret)
    assert.match(history.changes[0].new, /^qe1:/)
    const recorded = JSON.stringify(
      await db.from('table_cell_history').where('row_id', fx.rowId).select('old_value', 'new_value')
    )
    for (const secret of [PASSWORD, SECRET, 'second secret']) assert.notInclude(recorded, secret)
    const field = await db.from('table_fields').where('id', fx.secret).first()
    assert.notInclude(JSON.stringify(field), PASSWORD)
    // A rollback has no password: refused, the cell unchanged.
    assert.equal(
      await errorCode(
        fx.call('rollBackBeforeChange', {
          b_o: fx.book.b_o,
          rowId: String(fx.rowId),
          changeId: history.changes[0].id,
        })
      ),
      'ENCRYPTED_FIELD_LOCKED'
    )
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), 'second secret')
  })

  test('updateField changes the password and re-encrypts every value', async ({ assert }) => {
    const before = await stored(fx)
    const wrong = await fx.call('updateField', {
      fieldId: fx.secret,
      encryptionPassword: 'not it',
      newEncryptionPassword: 'new password',
    })
    assert.equal(wrong.errorCode, 'ENCRYPTION_PASSWORD_WRONG')
    assert.equal(await stored(fx), before)
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), SECRET)

    ok(
      await fx.call('updateField', {
        fieldId: fx.secret,
        encryptionPassword: PASSWORD,
        newEncryptionPassword: 'new password',
      })
    )
    assert.notEqual(await stored(fx), before)
    assert.isNull(await stored(fx, fx.emptyRow))
    const unlockNew = JSON.stringify({ [fx.secret]: 'new password' })
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: unlockNew }), SECRET)
    assert.equal(
      await errorCode(
        fx.call('getTableValues', { catId: fx.catId, encryptedFieldPasswords: fx.unlock })
      ),
      'ENCRYPTION_PASSWORD_WRONG'
    )
  })

  test('wrong passwords past the limit answer RATE_LIMITED for that user and field', async ({
    assert,
  }) => {
    const read = (passwords: string, call: Call = fx.call) =>
      call('getTableValues', { catId: fx.catId, encryptedFieldPasswords: passwords })
    const wrong = JSON.stringify({ [fx.secret]: 'guess' })
    for (let guess = 0; guess < PASSWORD_GUESSES.requests; guess++)
      assert.equal(await errorCode(read(wrong)), 'ENCRYPTION_PASSWORD_WRONG')
    const limited = await read(wrong)
    assert.equal(limited.errorCode, 'RATE_LIMITED')
    assert.isAbove(limited.retryAfter, 0)
    // Even the right password waits: the guesser cannot tell it.
    assert.equal(await errorCode(read(fx.unlock)), 'RATE_LIMITED')
    // Another user is not held back by the guesser.
    const reader = caller(fx.book.members[0].session)
    assert.equal(columnOf(ok(await read(fx.unlock, reader)), fx.secret)[0], SECRET)
  })

  test('a row token sees the encrypted cell masked and cannot write it', async ({ assert }) => {
    const { token } = ok(
      await fx.call('createTableToken', {
        b_o: fx.book.b_o,
        catId: fx.catId,
        rowId: String(fx.rowId),
      })
    )
    const anon = caller(null)
    const read = ok(await anon('getTableRowByToken', { token }))
    assert.equal(read.row.fields[String(fx.secret)].value, ENCRYPTED_MASK)
    assert.equal(read.row.fields[String(fx.plain)].value, 'first')
    const before = await stored(fx)
    const refused = await anon('updateTableRowByToken', {
      token,
      fieldValues: JSON.stringify({ [fx.plain]: 'by token', [fx.secret]: 'by token' }),
    })
    assert.equal(refused.errorCode, 'ENCRYPTED_FIELD_LOCKED')
    assert.equal(await stored(fx), before)
    assert.equal((await cellsOf(fx))(fx.rowId, fx.plain), 'first')
  })

  test('rights: a stranger, a reader, a writer, restricted and read-only sessions', async ({
    assert,
  }) => {
    const strangerBook = await makeBook()
    const stranger = caller(strangerBook.session)
    const read = { catId: fx.catId, encryptedFieldPasswords: fx.unlock }
    const write = {
      rowId: fx.rowId,
      fieldId: fx.secret,
      value: 'x',
      encryptedFieldPasswords: fx.unlock,
    }
    // A stranger learns nothing, not even whether a password is right.
    for (const passwords of [fx.unlock, JSON.stringify({ [fx.secret]: 'wrong' })]) {
      const answer = await stranger('getTableValues', {
        ...read,
        encryptedFieldPasswords: passwords,
      })
      assert.equal(answer.errorCode, 'NOT_FOUND')
      assert.equal(
        await errorCode(
          stranger('updateTableValue', { ...write, encryptedFieldPasswords: passwords })
        ),
        'NOT_FOUND'
      )
    }
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    assert.equal(await errorCode(hidden('getTableValues', read)), 'RESTRICTED_SESSION')
    const readonly = caller(await login(fx.book.owner, { restrictions: 'readonly' }))
    assert.equal(await errorCode(readonly('updateTableValue', write)), 'READONLY_SESSION')

    const reader = caller(fx.book.members[0].session)
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }, reader), SECRET)
    assert.equal(await secretOf(fx, {}, reader), ENCRYPTED_MASK)
    assert.equal(
      await errorCode(reader('updateTableValue', { ...write, encryptedFieldPasswords: 'wrong' })),
      'FORBIDDEN'
    )
    assert.equal(await errorCode(reader('updateTableValue', write)), 'FORBIDDEN')

    // A writer writes with the password; only administrators make or re-key encrypted fields.
    const writer = caller(fx.book.members[1].session)
    ok(await writer('updateTableValue', { ...write, value: 'by writer' }))
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), 'by writer')
    assert.equal(
      await errorCode(
        writer('createField', {
          catId: fx.catId,
          name: 'Mine',
          type: 'shorttext',
          encrypted: 1,
          encryptionPassword: PASSWORD,
        })
      ),
      'FORBIDDEN'
    )
    assert.equal(
      await errorCode(
        writer('updateField', {
          fieldId: fx.secret,
          encryptionPassword: PASSWORD,
          newEncryptionPassword: 'taken over',
        })
      ),
      'FORBIDDEN'
    )
    assert.equal(await secretOf(fx, { encryptedFieldPasswords: fx.unlock }), 'by writer')
  })
})
