import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { answerOf, bracketPairs } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { login, makeUser } from '#tests/helpers/users'
import { TOKEN_RATE, addressKey, tokenLimiters } from '../../services/table_tokens_service.js'
import {
  addField,
  addRows,
  caller,
  makeBook,
  ok,
  rowsChangedEvents,
  rowsOf,
} from '../helpers/tables.js'

/**
 * A token operation over real HTTP, without any session. Every request of the tests comes from
 * loopback (X-Forwarded-For is believed only from TRUSTED_PROXIES, unset here).
 */
async function anon(
  req: string,
  params: Record<string, unknown>,
  form: 'urlencoded' | 'json' = 'urlencoded'
) {
  const body =
    form === 'json'
      ? JSON.stringify({ req, ...params })
      : new URLSearchParams(bracketPairs({ req, ...params })).toString()
  const response = await fetch(`${serverUrl()}/live/api.php`, {
    method: 'POST',
    headers: {
      'Content-Type': form === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
    },
    body,
  })
  const answer = await answerOf(response)
  return answer.body
}

/** Each test starts with loopback's per-address budget whole (the window outlives a test). */
async function resetAddressBudget() {
  const { perAddress } = tokenLimiters()
  for (const ip of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) await perAddress.delete(addressKey(ip))
}

/** A table with a visible name, a hidden secret, an enum and a formula; a view hiding the secret. */
async function fixture() {
  const book = await makeBook([{ right: 3 }])
  const call = caller(book.session)
  const catId = ok(await call('createTable', { b_o: book.b_o, b_c: book.b_c, name: 'Leads' }))
    .catId as number
  const field = (name: string, type: string, options: Record<string, unknown> = {}) =>
    addField(call, catId, name, type, options)
  const f = {
    name: await field('Name', 'shorttext'),
    secret: await field('Secret', 'shorttext'),
    color: await field('Color', 'enum', { values: ['red', 'blue'] }),
    shout: await field('Shout', 'formula', { formula: '{Name}', resultType: 'text' }),
  }
  const viewId = ok(
    await call('createView', {
      catId,
      name: 'Public form',
      hiddenFields: JSON.stringify([f.secret]),
    })
  ).viewId as number
  const [rowId] = await addRows(call, [{ [f.name]: 'Ada', [f.secret]: 'hush', [f.color]: 'red' }], {
    catId,
  })
  const token = async (params: Record<string, unknown>) =>
    ok(await call('createTableToken', { b_o: book.b_o, catId, ...params }))
  return { book, call, catId, f, viewId, rowId, token }
}

/** Every cell of the table, as stored: a refused request must leave it as it was. */
async function tableState(catId: number) {
  return JSON.stringify(await db.from(`tt_${catId}`).orderBy('id'))
}

test.group('tables: rows and forms by token (issue 21 item 5)', (group) => {
  group.each.setup(resetAddressBudget)

  test('a row token reads the row with its view’s fields and writes them as the token', async ({
    assert,
  }) => {
    const fx = await fixture()
    const created = await fx.token({ rowId: String(fx.rowId), viewId: fx.viewId })
    assert.match(created.token, /^tt-/)
    assert.isAbove(created.token.length, 30)
    // Stored hashed: the token itself is nowhere in the table.
    const stored = await db.from('table_tokens').where('id', created.tokenId).first()
    assert.notEqual(stored.token_hash, created.token)
    assert.notInclude(JSON.stringify(stored), created.token)

    const read = ok(await anon('getTableRowByToken', { token: created.token }))
    assert.equal(read.row.id, fx.rowId)
    assert.equal(read.row.fields[fx.f.name].value, 'Ada')
    assert.notProperty(read.row.fields, String(fx.f.secret))
    assert.notInclude(JSON.stringify(read), 'hush')
    assert.deepEqual(
      read.fields.map((field: any) => field.id),
      [fx.f.name, fx.f.color, fx.f.shout]
    )

    const events = rowsChangedEvents()
    try {
      // JSON and PHP bracket forms of fieldValues, as other operations take them.
      ok(
        await anon('updateTableRowByToken', {
          token: created.token,
          fieldValues: { [fx.f.name]: 'Grace' },
        })
      )
      const updated = ok(
        await anon(
          'updateTableRowByToken',
          { token: created.token, fieldValues: { [fx.f.color]: 'blue' } },
          'json'
        )
      )
      assert.equal(updated.row.fields[fx.f.color].value, 'blue')
      assert.equal(updated.row.fields[fx.f.name].value, 'Grace')
    } finally {
      events.stop()
    }
    const mine = events.events.filter((event) => event.categoryId === fx.catId)
    assert.lengthOf(mine, 2)
    for (const event of mine) {
      assert.equal(event.source, 'token')
      assert.equal(event.tokenId, created.tokenId)
      assert.equal(event.actorId, fx.book.owner.id)
      assert.deepEqual(event.modified, [fx.rowId])
      assert.isAbove(event.stamp, 0)
    }
    const rows = await rowsOf(fx.call, fx.catId)
    const row = rows[fx.rowId]
    assert.equal(row[fx.f.name], 'Grace')
    assert.equal(row[fx.f.secret], 'hush')
  })

  test('a form token answers the form and adds rows; required fields are enforced', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { token } = await fx.token({ viewId: fx.viewId, requiredFields: [fx.f.name] })
    const { form } = ok(await anon('getNewTableRowByViewToken', { token }))
    assert.equal(form.viewId, fx.viewId)
    assert.equal(form.name, 'Public form')
    // The view's writable fields: the hidden secret and the computed formula are not in the form.
    assert.deepEqual(
      form.fields.map((field: any) => [field.id, field.type, field.required]),
      [
        [fx.f.name, 'shorttext', true],
        [fx.f.color, 'enum', false],
      ]
    )
    assert.deepEqual(form.fields[1].values, ['red', 'blue'])

    const before = await tableState(fx.catId)
    const missing = await anon('addNewTableRowByViewToken', {
      token,
      fieldValues: { [fx.f.color]: 'red' },
    })
    assert.equal(missing.errorCode, 'MISSING_PARAMETER')
    assert.equal(await tableState(fx.catId), before)

    const events = rowsChangedEvents()
    let added: Record<string, any>
    try {
      added = ok(
        await anon('addNewTableRowByViewToken', {
          token,
          fieldValues: JSON.stringify({ [fx.f.name]: 'Linus', [fx.f.color]: 'blue' }),
        })
      )
    } finally {
      events.stop()
    }
    const event = events.events.find((candidate) => candidate.categoryId === fx.catId)!
    assert.deepEqual(event.created, [added.id])
    assert.equal(event.source, 'token')
    const rows = await rowsOf(fx.call, fx.catId)
    const row = rows[added.id]
    assert.equal(row[fx.f.name], 'Linus')
    assert.equal(row[fx.f.color], 'blue')

    // A form token names no row; a row token is no form.
    const asRow = await anon('getTableRowByToken', { token })
    assert.equal(asRow.errorCode, 'INVALID_PARAMETER')
    const rowToken = await fx.token({ rowId: String(fx.rowId) })
    const asForm = await anon('getNewTableRowByViewToken', { token: rowToken.token })
    assert.equal(asForm.errorCode, 'INVALID_PARAMETER')
  })

  test('a row token answers activity cells like getTableRows, its own writes included', async ({
    assert,
  }) => {
    const fx = await fixture()
    const activity = await addField(fx.call, fx.catId, 'Activity', 'activity')
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    ok(await anon('updateTableRowByToken', { token, fieldValues: { [fx.f.name]: 'Grace' } }))
    const read = ok(await anon('getTableRowByToken', { token }))
    const cell = read.row.fields[activity]
    assert.isAtLeast(cell.value.total, 2)
    assert.equal(cell.value.last.action, 'update')
    assert.equal(cell.text, cell.value.last.m)
  })

  test('a row token without a view shows every field', async ({ assert }) => {
    const fx = await fixture()
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    const read = ok(await anon('getTableRowByToken', { token }))
    assert.equal(read.row.fields[fx.f.secret].value, 'hush')
  })

  test('a hidden field is neither returned nor writable; nothing is written', async ({
    assert,
  }) => {
    const fx = await fixture()
    const row = await fx.token({ rowId: String(fx.rowId), viewId: fx.viewId })
    const form = await fx.token({ viewId: fx.viewId })
    const before = await tableState(fx.catId)
    for (const [req, token] of [
      ['updateTableRowByToken', row.token],
      ['addNewTableRowByViewToken', form.token],
    ]) {
      const answer = await anon(req, {
        token,
        fieldValues: { [fx.f.name]: 'Mallory', [fx.f.secret]: 'leaked' },
      })
      assert.equal(answer.status, 'nok', req)
      assert.equal(answer.errorCode, 'INVALID_PARAMETER', req)
      assert.equal(answer.field, 'fieldValues')
      assert.notInclude(JSON.stringify(answer), 'hush')
      // A computed field is not writable either.
      const computed = await anon(req, { token, fieldValues: { [fx.f.shout]: 'x' } })
      assert.equal(computed.errorCode, 'INVALID_PARAMETER', req)
    }
    assert.equal(await tableState(fx.catId), before)
  })

  test('expired, revoked and read-only tokens answer their own nok and write nothing', async ({
    assert,
  }) => {
    const fx = await fixture()
    const before = await tableState(fx.catId)
    const values = { fieldValues: { [fx.f.name]: 'Eve' } }

    const readOnly = await fx.token({ rowId: String(fx.rowId), readOnly: 1 })
    ok(await anon('getTableRowByToken', { token: readOnly.token }))
    const refused = await anon('updateTableRowByToken', { token: readOnly.token, ...values })
    assert.equal(refused.errorCode, 'TOKEN_READONLY')
    assert.match(refused.error, /^apiProcess29: /)
    const readOnlyForm = await fx.token({ viewId: fx.viewId, readOnly: true })
    ok(await anon('getNewTableRowByViewToken', { token: readOnlyForm.token }))
    const readOnlyAdd = await anon('addNewTableRowByViewToken', {
      token: readOnlyForm.token,
      ...values,
    })
    assert.equal(readOnlyAdd.errorCode, 'TOKEN_READONLY')

    const expiring = await fx.token({ rowId: String(fx.rowId), expiresIn: 3600 })
    ok(await anon('getTableRowByToken', { token: expiring.token }))
    // Its hour has passed.
    await db
      .from('table_tokens')
      .where('id', expiring.tokenId)
      .update({ expires_at: Math.floor(Date.now() / 1000) - 1 })
    for (const req of ['getTableRowByToken', 'updateTableRowByToken']) {
      const answer = await anon(req, { token: expiring.token, ...values })
      assert.equal(answer.errorCode, 'TOKEN_EXPIRED', req)
    }

    const revoked = await fx.token({ viewId: fx.viewId })
    ok(await anon('getNewTableRowByViewToken', { token: revoked.token }))
    const revocation = ok(
      await fx.call('revokeTableToken', { b_o: fx.book.b_o, tokenId: revoked.tokenId })
    )
    assert.equal(revocation.tokenId, revoked.tokenId)
    for (const req of ['getNewTableRowByViewToken', 'addNewTableRowByViewToken']) {
      const answer = await anon(req, { token: revoked.token, ...values })
      assert.equal(answer.errorCode, 'TOKEN_REVOKED', req)
    }

    const unknown = await anon('getTableRowByToken', { token: 'tt-nope' })
    assert.equal(unknown.errorCode, 'TOKEN_INVALID')
    assert.equal(await tableState(fx.catId), before)
  })

  test('listTableTokens lists tokens without the tokens themselves', async ({ assert }) => {
    const fx = await fixture()
    const a = await fx.token({ rowId: String(fx.rowId), readOnly: 1 })
    const b = await fx.token({ viewId: fx.viewId, expiresIn: 60, requiredFields: [fx.f.name] })
    ok(await fx.call('revokeTableToken', { b_o: fx.book.b_o, tokenId: a.tokenId }))
    const listed = ok(await fx.call('listTableTokens', { b_o: fx.book.b_o, catId: fx.catId }))
    assert.notInclude(JSON.stringify(listed), a.token)
    assert.notInclude(JSON.stringify(listed), b.token)
    const [first, second] = listed.tokens
    assert.equal(first.tokenId, a.tokenId)
    assert.equal(first.kind, 'row')
    assert.equal(first.rowId, fx.rowId)
    assert.isTrue(first.readOnly)
    assert.isNumber(first.revokedAt)
    assert.equal(first.createdBy, fx.book.b_o)
    assert.equal(second.kind, 'form')
    assert.equal(second.viewId, fx.viewId)
    assert.deepEqual(second.requiredFields, [fx.f.name])
    assert.isNumber(second.expiresAt)
    assert.isNull(second.revokedAt)
  })

  test('a member without the admin right, a restricted session and a stranger cannot create, list or revoke', async ({
    assert,
  }) => {
    const fx = await fixture()
    const existing = await fx.token({ rowId: String(fx.rowId) })
    const member = caller(fx.book.members[0].session)
    const hidden = caller(await login(fx.book.owner, { restrictions: 'hideTables' }))
    const stranger = caller(await login(await makeUser()))
    const before = await db.from('table_tokens').where('category_id', fx.catId).count('* as n')
    for (const [who, call, codes] of [
      ['member (right 3)', member, ['FORBIDDEN', 'NOT_FOUND']],
      ['hideTables session', hidden, ['RESTRICTED_SESSION']],
      ['stranger', stranger, ['NOT_FOUND']],
    ] as const) {
      const answers = {
        create: await call('createTableToken', {
          b_o: fx.book.b_o,
          catId: fx.catId,
          rowId: String(fx.rowId),
        }),
        list: await call('listTableTokens', { b_o: fx.book.b_o, catId: fx.catId }),
        revoke: await call('revokeTableToken', { b_o: fx.book.b_o, tokenId: existing.tokenId }),
      }
      for (const [what, answer] of Object.entries(answers)) {
        assert.equal(answer.status, 'nok', `${who} ${what}`)
        assert.include(codes, answer.errorCode, `${who} ${what}: ${answer.errorCode}`)
        assert.notProperty(answer, 'token')
        assert.notProperty(answer, 'tokens')
      }
    }
    const after = await db.from('table_tokens').where('category_id', fx.catId).count('* as n')
    assert.deepEqual(after, before)
    // Still working: nobody revoked it.
    ok(await anon('getTableRowByToken', { token: existing.token }))
  })

  test('a token stops working when its creator loses the table', async ({ assert }) => {
    const fx = await fixture()
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    ok(await anon('getTableRowByToken', { token }))
    await db
      .from('book_members')
      .where({ book_id: fx.book.id, user_id: fx.book.owner.id })
      .update({ right: 0, invite: 'removed' })
    // The access cache holds rights for a second.
    let answer: Record<string, any> = {}
    for (let attempt = 0; attempt < 40; attempt++) {
      answer = await anon('getTableRowByToken', { token })
      if (answer.status === 'nok') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.equal(answer.status, 'nok')
    assert.notInclude(JSON.stringify(answer), 'Ada')
  })

  test('bad input answers documented nok codes and writes nothing', async ({ assert }) => {
    const fx = await fixture()
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    const before = await tableState(fx.catId)
    const tokensBefore = await db.from('table_tokens').count('* as n')
    const cases: [string, Record<string, unknown>, string][] = [
      ['createTableToken', { b_o: fx.book.b_o, catId: fx.catId }, 'MISSING_PARAMETER'],
      ['createTableToken', { b_o: fx.book.b_o, rowId: String(fx.rowId) }, 'MISSING_PARAMETER'],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: 'x', viewId: fx.viewId },
        'INVALID_PARAMETER',
      ],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: fx.catId, rowId: 'abc' },
        'INVALID_PARAMETER',
      ],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: fx.catId, viewId: 999999 },
        'INVALID_PARAMETER',
      ],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: fx.catId, viewId: fx.viewId, expiresIn: -5 },
        'INVALID_PARAMETER',
      ],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: fx.catId, viewId: fx.viewId, requiredFields: [fx.f.secret] },
        'INVALID_PARAMETER',
      ],
      [
        'createTableToken',
        { b_o: fx.book.b_o, catId: fx.catId, rowId: String(fx.rowId + 1000) },
        'NOT_FOUND',
      ],
      ['listTableTokens', { b_o: fx.book.b_o }, 'MISSING_PARAMETER'],
      ['revokeTableToken', { b_o: fx.book.b_o }, 'MISSING_PARAMETER'],
      ['revokeTableToken', { b_o: fx.book.b_o, tokenId: 'one' }, 'INVALID_PARAMETER'],
      ['revokeTableToken', { b_o: fx.book.b_o, tokenId: 987654321 }, 'NOT_FOUND'],
    ]
    for (const [req, params, code] of cases) {
      const answer = await fx.call(req, params)
      assert.equal(answer.errorCode, code, `${req} ${JSON.stringify(params)}`)
    }
    const anonymous: [string, Record<string, unknown>, string][] = [
      ['getTableRowByToken', {}, 'MISSING_PARAMETER'],
      ['getTableRowByToken', { token: ['a', 'b'] }, 'INVALID_PARAMETER'],
      ['getTableRowByToken', { token: 'x'.repeat(500) }, 'INVALID_PARAMETER'],
      ['updateTableRowByToken', { token }, 'MISSING_PARAMETER'],
      ['updateTableRowByToken', { token, fieldValues: 'not json' }, 'INVALID_PARAMETER'],
      ['updateTableRowByToken', { token, fieldValues: '{}' }, 'MISSING_PARAMETER'],
      ['updateTableRowByToken', { token, fieldValues: { 999999: 'x' } }, 'INVALID_PARAMETER'],
      ['addNewTableRowByViewToken', { fieldValues: { [fx.f.name]: 'x' } }, 'MISSING_PARAMETER'],
    ]
    for (const [req, params, code] of anonymous) {
      const answer = await anon(req, params)
      assert.equal(answer.errorCode, code, `${req} ${JSON.stringify(params).slice(0, 80)}`)
      assert.isString(answer.errorMsg)
    }
    assert.equal(await tableState(fx.catId), before)
    assert.deepEqual(await db.from('table_tokens').count('* as n'), tokensBefore)
  })

  test('past the per-token limit a token answers RATE_LIMITED with retryAfter', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    for (let index = 0; index < TOKEN_RATE.perToken; index++)
      ok(await anon('getTableRowByToken', { token }))
    const limited = await anon('getTableRowByToken', { token })
    assert.equal(limited.errorCode, 'RATE_LIMITED')
    assert.isAbove(limited.retryAfter, 0)
    assert.notProperty(limited, 'row')
    // Another token of the same table still has its own budget.
    const other = await fx.token({ rowId: String(fx.rowId) })
    ok(await anon('getTableRowByToken', { token: other.token }))
  }).timeout(120_000)

  test('past the per-address limit even a good token is refused from that address', async ({
    assert,
  }) => {
    const fx = await fixture()
    const { token } = await fx.token({ rowId: String(fx.rowId) })
    let guesses = 0
    for (; guesses <= TOKEN_RATE.perAddress; guesses++) {
      const guess = await anon('getTableRowByToken', { token: `tt-guess-${guesses}` })
      if (guess.errorCode === 'RATE_LIMITED') break
      assert.equal(guess.errorCode, 'TOKEN_INVALID')
    }
    assert.equal(guesses, TOKEN_RATE.perAddress)
    const blocked = await anon('getTableRowByToken', { token })
    assert.equal(blocked.errorCode, 'RATE_LIMITED')
    assert.notProperty(blocked, 'row')
    await resetAddressBudget()
    ok(await anon('getTableRowByToken', { token }))
  }).timeout(120_000)
})
