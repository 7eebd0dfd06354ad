import { test } from '@japa/runner'
import { caller, makeBook, ok, type Call } from '../helpers/tables.js'

/** The fields of every table of the book, as getBookTables (includeFields) answers them. */
async function fieldsOf(call: Call, book: { b_o: string; b_c: string }) {
  const answer = ok(
    await call('getBookTables', { b_o: book.b_o, b_c: book.b_c, includeFields: 'true' })
  )
  return new Map<number, Record<string, any>[]>(
    answer.bookTables.categories.map((category: any) => [category.id, category.fields])
  )
}

const codeOf = (fields: Record<string, any>[] | undefined, id: number) =>
  fields?.find((field) => field.id === id)?.fixed_code

test.group('tables: a field fixed_code is its name in lower case', (group) => {
  let book: Awaited<ReturnType<typeof makeBook>>
  let call: Call
  let catId: number
  let otherCatId: number
  const ids: Record<string, number> = {}

  group.setup(async () => {
    book = await makeBook()
    call = caller(book.session)
    const base = { b_o: book.b_o, b_c: book.b_c }
    // Initial fields of createTable go through createField's code.
    catId = ok(
      await call('createTable', {
        ...base,
        name: 'Documents',
        fields: JSON.stringify([
          { name: 'Attachments', type: 'files' },
          { name: 'Description', type: 'mediumtext' },
        ]),
      })
    ).catId
    otherCatId = ok(
      await call('createTable', {
        ...base,
        name: 'Invoices',
        fields: JSON.stringify([{ name: 'Attachments', type: 'files' }]),
      })
    ).catId
    const fields = await fieldsOf(call, book)
    for (const field of fields.get(catId)!) ids[field.name] = field.id
    ids.otherAttachments = fields.get(otherCatId)![0].id
  })

  const fieldsIn = async (id: number) => {
    const tables = await fieldsOf(call, book)
    return tables.get(id)
  }

  /** The field ids getNamedTableValues answers for `fieldCodes` of the table coded `catCode`. */
  const namedFieldIds = async (catCode: string, fieldCodes: string) => {
    const params = { b_o: book.b_o, b_c: book.b_c, catCode, fieldCodes }
    const named = ok(await call('getNamedTableValues', params))
    return named.tableValues.fields.map((field: any) => field.id) as number[]
  }

  const createField = async (name: string, type = 'shorttext') =>
    ok(await call('createField', { b_o: book.b_o, catId, name, type })).fieldId as number

  test('createTable and createField name the field: "attachments", "description"', async ({
    assert,
  }) => {
    const dueDate = await createField('Due Date', 'date')
    const accented = await createField('Équipe / Rôle')
    const fields = await fieldsIn(catId)
    assert.equal(codeOf(fields, ids.Attachments), 'attachments')
    assert.equal(codeOf(fields, ids.Description), 'description')
    assert.equal(codeOf(fields, dueDate), 'due_date')
    assert.equal(codeOf(fields, accented), 'equipe_role')
  })

  test('each table has its own "attachments"', async ({ assert }) => {
    const fields = await fieldsOf(call, book)
    assert.equal(codeOf(fields.get(otherCatId), ids.otherAttachments), 'attachments')
    assert.equal(codeOf(fields.get(catId), ids.Attachments), 'attachments')
  })

  test('a code taken in the table gets a suffix: _2, _3', async ({ assert }) => {
    // Names differ (the table refuses two fields of one name), their codes do not.
    const second = await createField('Due-date')
    const third = await createField('due  date!')
    const fields = await fieldsIn(catId)
    assert.equal(codeOf(fields, second), 'due_date_2')
    assert.equal(codeOf(fields, third), 'due_date_3')
  })

  test('renaming a field keeps its code; its old name then gets a suffix', async ({ assert }) => {
    ok(await call('updateField', { b_o: book.b_o, fieldId: ids.Attachments, name: 'Files' }))
    const fresh = await createField('Attachments', 'files')
    const fields = await fieldsIn(catId)
    assert.equal(fields?.find((field) => field.id === ids.Attachments)?.name, 'Files')
    assert.equal(codeOf(fields, ids.Attachments), 'attachments')
    assert.equal(codeOf(fields, fresh), 'attachments_2')
  })

  test('getNamedTableValues finds fields by these codes', async ({ assert }) => {
    ok(await call('updateTable', { b_o: book.b_o, catId: otherCatId, code: 'invoices' }))
    assert.deepEqual(await namedFieldIds('invoices', 'attachments'), [ids.otherAttachments])
  })

  test("a field's sync code wins over another field's fixed code", async ({ assert }) => {
    const named = await createField('Notes')
    const coded = ok(
      await call('createField', {
        b_o: book.b_o,
        catId,
        name: 'Remarks',
        type: 'shorttext',
        code: 'notes',
      })
    ).fieldId
    ok(await call('updateTable', { b_o: book.b_o, catId, code: 'documents' }))
    const fields = await fieldsIn(catId)
    assert.equal(codeOf(fields, named), 'notes')
    assert.deepEqual(await namedFieldIds('documents', 'notes,remarks'), [coded, coded])
  })
})
