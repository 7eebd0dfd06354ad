import { test } from '@japa/runner'
import { answerJson } from '#core/rpc/answer_json'
import {
  commentCellKey,
  displayText,
  serializeCell,
  type FieldDef,
  type FieldOptions,
  type FieldType,
} from '../../lib/field_types.js'
import {
  serializeCategory,
  serializeField,
  serializeForm,
  serializePageColumns,
  serializeRowInfos,
  serializeTab,
  serializeView,
} from '../../serializers/table_serializer.js'
import type { CategoryMeta, FormMeta, TabMeta, ViewMeta } from '../../services/meta_service.js'

/**
 * The wire shapes of smart-table structure and cells, field by field: names
 * and types are a contract (docs/spec/service-interface.md 2.6, 2.8). MySQL
 * answers booleans as 0/1 and may answer numbers as strings: cells are typed.
 */
const field = (type: FieldType, options: FieldOptions = {}, overrides: Partial<FieldDef> = {}) =>
  ({
    id: 12,
    categoryId: 3,
    name: 'Price',
    code: 'price',
    fixedCode: 'f0a1b2c3d4e5f',
    type,
    order: 2,
    description: 'what it costs',
    readOnly: false,
    options,
    column: 'f12',
    lastModified: 1700000000,
    ...overrides,
  }) satisfies FieldDef

const view = (overrides: Partial<ViewMeta> = {}): ViewMeta => ({
  id: 31,
  categoryId: 3,
  name: 'All',
  description: null,
  presentation: 'grid',
  locked: false,
  order: 1,
  card: {},
  calendar: {},
  hiddenFields: [],
  filterGroup: null,
  lastModified: 1700000100,
  ...overrides,
})

const category = (overrides: Partial<CategoryMeta> = {}): CategoryMeta => ({
  id: 3,
  formId: 2,
  name: 'Contacts',
  description: 'people',
  code: 'contacts',
  fixedCode: 'c0a1b2c3d4e5f',
  order: 1,
  locked: false,
  rightsModify: true,
  rightsSelect: 1,
  sysFunc: null,
  triggerUpdateUrl: null,
  prefs: {},
  metaVersion: 5,
  sstamp: 5,
  lastModified: 1700000000,
  fields: [field('double')],
  views: [view()],
  ...overrides,
})

test.group('tables serializer: fields', () => {
  test('a field carries exactly the common keys, typed', ({ assert }) => {
    assert.deepEqual(serializeField(field('shorttext')), {
      id: 12,
      name: 'Price',
      code: 'price',
      fixed_code: 'f0a1b2c3d4e5f',
      type: 'shorttext',
      order: 2,
      description: 'what it costs',
      readOnly: false,
      values: null,
      dateFormat: null,
      numformat: null,
      lastModified: 1700000000,
    })
  })

  test('readOnly is true for a read-only field and for every computed type but link: {type}')
    .with(
      (
        [
          ['lookup', true],
          ['rollup', true],
          ['formula', true],
          ['autoincrement', true],
          ['created_time', true],
          ['modified_time', true],
          ['created_by', true],
          ['modified_by', true],
          ['link', false],
          ['comments', false],
          ['integer', false],
        ] as [FieldType, boolean][]
      ).map(([type, readOnly]) => ({ type, readOnly }))
    )
    .run(({ assert }, { type, readOnly }) => {
      assert.strictEqual(serializeField(field(type)).readOnly, readOnly)
      assert.isTrue(serializeField(field(type, {}, { readOnly: true })).readOnly)
    })

  test('dates: dateFormat defaults by withTime; withTime only on date fields', ({ assert }) => {
    assert.deepEqual(
      [serializeField(field('date')).dateFormat, serializeField(field('date')).withTime],
      ['Y-m-d', false]
    )
    const timed = serializeField(field('date', { withTime: true }))
    assert.deepEqual([timed.dateFormat, timed.withTime], ['Y-m-d H:i:s', true])
    assert.equal(serializeField(field('date', { dateFormat: 'd/m/Y' })).dateFormat, 'd/m/Y')
    const created = serializeField(field('created_time'))
    assert.equal(created.dateFormat, 'Y-m-d')
    assert.notProperty(created, 'withTime')
    assert.isNull(serializeField(field('shorttext', { dateFormat: 'd/m/Y' })).dateFormat)
  })

  test('numformat on double, rollup and formula fields only', ({ assert }) => {
    for (const type of ['double', 'rollup', 'formula'] as FieldType[]) {
      assert.equal(serializeField(field(type, { numformat: '0.00' })).numformat, '0.00')
      assert.isNull(serializeField(field(type)).numformat)
    }
    assert.isNull(serializeField(field('integer', { numformat: '0.00' })).numformat)
  })

  test('multiple on enum and link fields only, a boolean', ({ assert }) => {
    assert.isFalse(serializeField(field('enum')).multiple)
    assert.isTrue(serializeField(field('link', { multiple: true, linkCatId: 4 })).multiple)
    assert.notProperty(serializeField(field('shorttext', { multiple: true })), 'multiple')
  })

  test('enum: values, and enumColors (given, or built from the values) unless includeEnums is false', ({
    assert,
  }) => {
    const plainEnum = serializeField(field('enum', { values: ['a', 'b'] }))
    assert.deepEqual(plainEnum.values, ['a', 'b'])
    assert.deepEqual(plainEnum.enumColors, {
      values: [
        { value: 'a', color: '' },
        { value: 'b', color: '' },
      ],
      strict: false,
      displayColors: false,
    })
    const colored = serializeField(
      field('enum', {
        values: ['a'],
        enumColors: { values: [{ value: 'a', color: '#f00' }], strict: true, displayColors: true },
      })
    )
    assert.deepEqual(colored.enumColors, {
      values: [{ value: 'a', color: '#f00' }],
      strict: true,
      displayColors: true,
    })
    assert.notProperty(
      serializeField(field('enum', { values: ['a'] }), { includeEnums: false }),
      'enumColors'
    )
    assert.notProperty(serializeField(field('shorttext')), 'enumColors')
  })

  test('link: linkCatId (null when unset)', ({ assert }) => {
    assert.strictEqual(serializeField(field('link', { linkCatId: 4 })).linkCatId, 4)
    assert.isNull(serializeField(field('link')).linkCatId)
    assert.notProperty(serializeField(field('lookup')), 'linkCatId')
  })

  test('lookup and rollup: linkFieldId and targetFieldId; rollup also its function (count by default)', ({
    assert,
  }) => {
    const lookup = serializeField(field('lookup', { linkFieldId: 7, targetFieldId: 8 }))
    assert.deepEqual([lookup.linkFieldId, lookup.targetFieldId], [7, 8])
    assert.notProperty(lookup, 'rollup')
    const rollup = serializeField(field('rollup', { linkFieldId: 7, rollup: 'sum' }))
    assert.deepEqual([rollup.linkFieldId, rollup.targetFieldId, rollup.rollup], [7, null, 'sum'])
    assert.equal(serializeField(field('rollup')).rollup, 'count')
  })

  test('formula: the formula and its result type (number by default)', ({ assert }) => {
    const formula = serializeField(field('formula', { formula: '{A} & "x"', resultType: 'text' }))
    assert.deepEqual([formula.formula, formula.resultType], ['{A} & "x"', 'text'])
    const bare = serializeField(field('formula'))
    assert.deepEqual([bare.formula, bare.resultType], ['', 'number'])
  })
})

test.group('tables serializer: views, categories, tabs, forms', () => {
  test('a view carries its settings, card and calendar keys always present', ({ assert }) => {
    assert.deepEqual(
      serializeView(
        view({
          description: 'd',
          presentation: 'card',
          locked: true,
          hiddenFields: [4],
          card: { layout: 'wide' },
          calendar: { start_field_id: 5 },
        })
      ),
      {
        id: 31,
        name: 'All',
        description: 'd',
        presentation: 'card',
        locked: true,
        order: 1,
        hiddenFields: [4],
        lastModified: 1700000100,
        filterGroup: null,
        card: { hz_field_id: null, layout: 'wide', title_field_id: null },
        calendar: {
          display_field_id: null,
          start_field_id: 5,
          end_field_id: null,
          co_field_id: null,
        },
      }
    )
  })

  test("a view's filter group lists its filters; a filter without a date takes the group's", ({
    assert,
  }) => {
    const serialized = serializeView(
      view({
        filterGroup: {
          id: 8,
          operator: 'or',
          lastModified: 1700000200,
          filters: [
            {
              id: 1,
              field_id: 12,
              filter_type: 'text',
              json: { predicate: 'is', operand: 'x' },
              lastModified: 1700000300,
            },
            { id: 2, field_id: 12, filter_type: 'sort', json: { predicate: 'desc' } },
          ],
        },
      })
    )
    assert.deepEqual(serialized.filterGroup, {
      id: 8,
      operator: 'or',
      lastModified: 1700000200,
      filters: [
        {
          id: 1,
          field_id: 12,
          filter_type: 'text',
          json: { predicate: 'is', operand: 'x' },
          lastModified: 1700000300,
        },
        {
          id: 2,
          field_id: 12,
          filter_type: 'sort',
          json: { predicate: 'desc' },
          lastModified: 1700000200,
        },
      ],
    })
  })

  test('a category carries its identity, constants of the reference server and its views', ({
    assert,
  }) => {
    const serialized = serializeCategory(category())
    assert.deepEqual(
      { ...serialized, views: serialized.views.length },
      {
        id: 3,
        name: 'Contacts',
        description: 'people',
        code: 'contacts',
        fixed_code: 'c0a1b2c3d4e5f',
        order: 1,
        fpAutoExport: false,
        mobLargeColNb: 3,
        mobSmallColNb: 2,
        pivot_id: null,
        p_catid: null,
        pivot_catid: null,
        p_field_hz: null,
        p_field_vt: null,
        p_field_va: null,
        p_field_co: null,
        locked: 0,
        sysFunc: null,
        triggerUpdateUrl: null,
        rights: { modify: true, select: 1 },
        lastModified: '2023-11-14 22:13:20',
        prefs: { link_presentation: 'text' },
        views: 1,
        selectedViewId: 31,
        fields: null,
      }
    )
  })

  test('a locked category says 1; its prefs override the default link presentation', ({
    assert,
  }) => {
    const serialized = serializeCategory(
      category({ locked: true, prefs: { link_presentation: 'chip', color: 'red' } })
    )
    assert.strictEqual(serialized.locked, 1)
    assert.deepEqual(serialized.prefs, { link_presentation: 'chip', color: 'red' })
  })

  test('fields only with includeFields; includeEnums reaches them', ({ assert }) => {
    const withEnum = category({ fields: [field('enum', { values: ['a'] })] })
    const fields = serializeCategory(withEnum, { includeFields: true }).fields!
    assert.lengthOf(fields, 1)
    assert.property(fields[0], 'enumColors')
    const bare = serializeCategory(withEnum, { includeFields: true, includeEnums: false }).fields!
    assert.notProperty(bare[0], 'enumColors')
  })

  test("selectedViewId: the reader's choice, else the first view, else null", ({ assert }) => {
    assert.equal(serializeCategory(category(), { selectedViewId: 99 }).selectedViewId, 99)
    assert.isNull(serializeCategory(category({ views: [] })).selectedViewId)
  })

  test('views carry rowIds only when asked (android format), [] for a view without rows', ({
    assert,
  }) => {
    assert.notProperty(serializeCategory(category()).views[0], 'rowIds')
    const withIds = serializeCategory(category({ views: [view(), view({ id: 32 })] }), {
      viewRowIds: new Map([[31, [5, 6]]]),
    })
    assert.deepEqual(
      withIds.views.map((serialized) => serialized.rowIds),
      [[5, 6], []]
    )
  })

  test('a tab: ids, order, hidden, lastModified', ({ assert }) => {
    const tab: TabMeta = {
      id: 41,
      formId: 2,
      categoryId: 3,
      viewId: null,
      order: 2,
      hidden: true,
      lastModified: 1700000400,
    }
    assert.deepEqual(serializeTab(tab), {
      id: 41,
      category_id: 3,
      view_id: null,
      order: 2,
      hidden: true,
      lastModified: 1700000400,
    })
  })

  test("a form: identity, rights, the reader's right and last tab (0 when none)", ({ assert }) => {
    const form: FormMeta = {
      id: 2,
      bookId: 9,
      name: 'book1',
      description: null,
      creatorId: 1,
      isPublic: true,
      isSystem: false,
      rightsModify: true,
      rightsSelect: 1,
      sstamp: 10,
      lastModified: 1700000500,
    }
    assert.deepEqual(serializeForm(form, { creator: 'u1', right: 4, lastTabId: 41 }), {
      id: 2,
      name: 'book1',
      description: null,
      creator: 'u1',
      platform: false,
      system: false,
      public: true,
      lastModified: 1700000500,
      rights: { modify: true, select: 1 },
      right: 4,
      lastTabId: 41,
    })
    const anonymous = serializeForm(form, { creator: 'u1', right: null, lastTabId: null })
    assert.deepEqual([anonymous.right, anonymous.lastTabId], [0, 0])
  })
})

test.group('tables serializer: cells', () => {
  test('{type} cell {label}')
    .with([
      { type: 'integer', label: 'from a MySQL string', stored: '12', value: 12 },
      { type: 'double', label: 'empty', stored: null, value: null },
      { type: 'rollup', label: 'a number', stored: 2.5, value: 2.5 },
      { type: 'checkbox', label: '1 is true', stored: 1, value: true },
      { type: 'checkbox', label: "'0' is false", stored: '0', value: false },
      { type: 'checkbox', label: 'empty is false', stored: null, value: false },
      { type: 'shorttext', label: 'as stored', stored: 'x', value: 'x' },
      { type: 'shorttext', label: 'empty', stored: undefined, value: null },
      { type: 'date', label: 'as stored', stored: '2024-01-10', value: '2024-01-10' },
      { type: 'user', label: 'a user code', stored: 'u1', value: 'u1' },
      { type: 'files', label: 'parsed', stored: '[{"name":"a"}]', value: [{ name: 'a' }] },
      { type: 'files', label: 'empty', stored: '', value: null },
      { type: 'files', label: 'not JSON', stored: 'raw', value: 'raw' },
      { type: 'activity', label: 'no value', stored: 'x', value: null },
    ] as { type: FieldType; label: string; stored: unknown; value: unknown }[])
    .run(({ assert }, { type, stored, value }) => {
      assert.deepEqual(serializeCell(field(type), { f12: stored }), { value })
    })

  test('a multiple enum is its list and its text', ({ assert }) => {
    assert.deepEqual(serializeCell(field('enum', { multiple: true }), { f12: '["a","b"]' }), {
      value: ['a', 'b'],
      text: 'a, b',
    })
    assert.deepEqual(serializeCell(field('enum', { multiple: true }), { f12: null }), {
      value: [],
      text: '',
    })
  })

  test('a link is its row ids (numbers) and its caption', ({ assert }) => {
    assert.deepEqual(serializeCell(field('link'), { f12: '["5",6]', f12_t: 'Acme, Globex' }), {
      value: [5, 6],
      text: 'Acme, Globex',
    })
    assert.deepEqual(serializeCell(field('link'), { f12: null }), { value: [], text: '' })
  })

  test('system fields read the system columns', ({ assert }) => {
    const row = { created_at: '2024-01-10 10:00:00', updated_by: 'u2' }
    assert.deepEqual(serializeCell(field('created_time', {}, { column: null }), row), {
      value: '2024-01-10 10:00:00',
    })
    assert.deepEqual(serializeCell(field('modified_by', {}, { column: null }), row), {
      value: 'u2',
    })
  })

  test('a comments cell is what the page read attached to the row, else null', ({ assert }) => {
    const comments = field('comments', {}, { column: null })
    const summary = { summary: { total: 1 } }
    assert.deepEqual(serializeCell(comments, { [commentCellKey(12)]: summary }), {
      value: summary,
    })
    assert.deepEqual(serializeCell(comments, {}), { value: null })
  })

  test('display text: the text of lists, JSON of objects, empty for nothing', ({ assert }) => {
    assert.equal(displayText(field('enum', { multiple: true }), { f12: '["a","b"]' }), 'a, b')
    assert.equal(displayText(field('files'), { f12: '{"a":1}' }), '{"a":1}')
    assert.equal(displayText(field('integer'), { f12: '7' }), '7')
    assert.equal(displayText(field('shorttext'), { f12: null }), '')
  })
})

test.group('tables serializer: a page, written as JSON text', () => {
  /** The columns format as objects: each field serialized, its values {id, value[, text]}. */
  const asObjects = (fields: FieldDef[], rows: Record<string, unknown>[]) =>
    fields.map((one) => ({
      ...serializeField(one),
      values: rows.map((row) => {
        const cell = serializeCell(one, row)
        return 'text' in cell
          ? { id: Number(row.id), value: cell.value, text: cell.text }
          : { id: Number(row.id), value: cell.value }
      }),
    }))

  test('the columns format: the text JSON.stringify writes of the objects', ({ assert }) => {
    const fields = [
      field('shorttext', {}, { id: 3, name: 'Name "quoted"', column: 'f3' }),
      field('enum', { values: ['a', 'b'], multiple: true }, { id: 4, column: 'f4' }),
      field('link', { linkCatId: 9 }, { id: 5, column: 'f5' }),
      field('double', {}, { id: 6, column: 'f6' }),
      field('checkbox', {}, { id: 7, column: 'f7' }),
      field('comments', {}, { id: 8, column: null }),
      field('created_by', {}, { id: 10, column: null }),
    ]
    const rows = [
      {
        id: 3 * 2 ** 32 + 1,
        f3: 'é \\ "x" \u0001 \ud83d',
        f4: '["a","b"]',
        f5: '[38654705665]',
        f5_t: 'Caption\n2',
        f6: 1.5,
        f7: 1,
      },
      { id: 3 * 2 ** 32 + 2, f3: null, f4: null, f5: null, f6: '2.25', f7: 0, created_by: 'u1' },
      {
        id: 3 * 2 ** 32 + 3,
        f3: '',
        f6: Number.NaN,
        [commentCellKey(8)]: { summary: { total: 2 } },
      },
    ]
    const text = answerJson({ fields: serializePageColumns(fields, rows) })
    assert.strictEqual(text, JSON.stringify({ fields: asObjects(fields, rows) }))
    assert.strictEqual(
      answerJson({ fields: serializePageColumns(fields, []) }),
      JSON.stringify({ fields: asObjects(fields, []) })
    )
  })

  test('rowInfos: {rowId: {order, index}} in page order, [] when empty', ({ assert }) => {
    const rows = [
      { id: 3 * 2 ** 32 + 7, ord: 2 },
      { id: 3 * 2 ** 32 + 1, ord: null },
      { id: 3 * 2 ** 32 + 4, ord: 1.5 },
    ]
    const infos: Record<string, unknown> = {}
    rows.forEach(
      (row, index) => (infos[String(row.id)] = { order: Number(row.ord), index: 200 + index })
    )
    assert.strictEqual(
      answerJson({ r: serializeRowInfos(rows, 200) }),
      JSON.stringify({ r: infos })
    )
    assert.deepEqual(serializeRowInfos([], 0), [])
    // Ids that are array indexes (never a table's: id x 2^32 + n) are ordered as JSON.stringify does.
    const small = [
      { id: 9, ord: 1 },
      { id: 2, ord: 2 },
    ]
    assert.strictEqual(
      answerJson({ r: serializeRowInfos(small, 0) }),
      '{"r":{"2":{"order":2,"index":1},"9":{"order":1,"index":0}}}'
    )
  })
})
