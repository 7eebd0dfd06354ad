import { test } from '@japa/runner'
import { RpcError } from '#core/rpc/errors'
import {
  FIELD_TYPES,
  kindOf,
  type FieldDef,
  type FieldOptions,
  type FieldType,
  type TypeKind,
} from '../../lib/field_types.js'
import {
  FilterCompiler,
  PREDICATES,
  canonicalPredicate,
  normalizeFilter,
  normalizeGroup,
  type FilterGroupSpec,
} from '../../lib/filter_compiler.js'

/**
 * The compiled SQL is compared without identifier quotes (they follow the
 * database: "f1" on SQLite, `f1` on MariaDB). Fields live in category 1;
 * field n is stored in column fn, multi-valued ones also in side table tt_1_mn.
 */
const SYSTEM: Partial<Record<FieldType, true>> = {
  created_time: true,
  modified_time: true,
  created_by: true,
  modified_by: true,
  comments: true,
  activity: true,
}
const field = (id: number, type: FieldType, options: FieldOptions = {}): FieldDef => ({
  id,
  categoryId: 1,
  name: `Field ${id}`,
  code: null,
  fixedCode: `fx${id}`,
  type,
  order: id,
  description: null,
  readOnly: false,
  options,
  column: SYSTEM[type] ? null : `f${id}`,
  lastModified: 0,
})

const F = {
  text: field(1, 'shorttext'),
  number: field(2, 'integer'),
  date: field(3, 'date'),
  bool: field(4, 'checkbox'),
  enum: field(5, 'enum', { values: ['a', 'b'] }),
  multi: field(6, 'enum', { values: ['a', 'b', 'c'], multiple: true }),
  link: field(7, 'link', { linkCatId: 2, multiple: true }),
  user: field(8, 'user'),
  files: field(9, 'files'),
  comments: field(10, 'comments'),
  created: field(11, 'created_time'),
  creator: field(12, 'created_by'),
}
const FIELDS = Object.values(F)

/** Wednesday 13 March 2024, 10:00 UTC. */
const NOW = new Date(Date.UTC(2024, 2, 13, 10, 0, 0))
const compiler = (userCode: string | null = 'me1') =>
  new FilterCompiler(FIELDS, { userCode, now: NOW })

const plain = (sql: string) => sql.replaceAll('"', '').replaceAll('`', '')

/** One predicate on one field: its SQL (unquoted) and bindings. */
const compile = (
  target: FieldDef,
  predicate: string,
  operand?: unknown,
  userCode?: string | null
) => {
  const sql = compiler(userCode).predicate(target, predicate, operand)
  return { sql: plain(sql.sql), bindings: sql.bindings }
}

/** The nok an expression throws (code and message), or null when it throws nothing. */
const refusal = (run: () => unknown) => {
  try {
    run()
    return null
  } catch (error) {
    if (!(error instanceof RpcError)) throw error
    return { code: error.code, message: error.message }
  }
}

test.group('filter compiler: the catalogue', () => {
  test('{type} fields filter as {kind}')
    .with(
      (
        [
          ['shorttext', 'text'],
          ['mediumtext', 'text'],
          ['email', 'text'],
          ['phone', 'text'],
          ['url', 'text'],
          ['lookup', 'text'],
          ['double', 'number'],
          ['integer', 'number'],
          ['autoincrement', 'number'],
          ['rollup', 'number'],
          ['date', 'date'],
          ['created_time', 'date'],
          ['modified_time', 'date'],
          ['checkbox', 'bool'],
          ['enum', 'enum'],
          ['link', 'link'],
          ['user', 'user'],
          ['created_by', 'user'],
          ['modified_by', 'user'],
          ['files', 'files'],
          ['comments', 'none'],
          ['activity', 'none'],
          ['smarttext', 'text'],
        ] as [FieldType, TypeKind][]
      ).map(([type, kind]) => ({ type, kind }))
    )
    .run(({ assert }, { type, kind }) => {
      assert.equal(kindOf({ type, options: {} }), kind)
    })

  test('formula fields filter as their result type; multiple enums as lists', ({ assert }) => {
    assert.equal(kindOf({ type: 'formula', options: {} }), 'number')
    assert.equal(kindOf({ type: 'formula', options: { resultType: 'text' } }), 'text')
    assert.equal(kindOf({ type: 'enum', options: { multiple: true } }), 'multi')
  })

  test('every field type is in the table above', ({ assert }) => {
    assert.lengthOf(FIELD_TYPES, 24)
  })

  test('every predicate of the {kind} catalogue compiles on a {kind} field')
    .with(
      (Object.keys(PREDICATES) as TypeKind[])
        .filter((kind) => kind !== 'none')
        .map((kind) => ({ kind }))
    )
    .run(({ assert }, { kind }) => {
      const target = FIELDS.find((candidate) => kindOf(candidate) === kind)!
      const operands: Record<string, unknown> = {
        between: kind === 'date' ? ['2024-01-01', '2024-01-31'] : [1, 2],
        within: 'today',
      }
      for (const predicate of PREDICATES[kind]) {
        const operand =
          operands[predicate] ??
          (kind === 'number' || kind === 'link' ? '1' : kind === 'date' ? '2024-01-01' : 'a')
        const sql = compiler().predicate(target, predicate, operand)
        assert.isString(sql.sql, `${kind} ${predicate}`)
      }
    })

  test('a predicate outside the catalogue of its kind is refused: {predicate} on {kind}')
    .with([
      { kind: 'text', predicate: 'lt' },
      { kind: 'number', predicate: 'contains' },
      { kind: 'date', predicate: 'any_of' },
      { kind: 'bool', predicate: 'is_empty' },
      { kind: 'files', predicate: 'is' },
      { kind: 'link', predicate: 'lt' },
      { kind: 'none', predicate: 'is_empty' },
    ])
    .run(({ assert }, { kind, predicate }) => {
      const target = FIELDS.find((candidate) => kindOf(candidate) === kind)!
      const refused = refusal(() => compiler().predicate(target, predicate, 'x'))
      assert.equal(refused?.code, 'INVALID_PARAMETER')
      assert.include(refused?.message, `Unknown predicate "${predicate}"`)
    })

  test('predicate spellings: {raw} is {canonical}')
    .with(
      (
        [
          ['=', 'is'],
          ['Equals', 'is'],
          ['is not', 'is_not'],
          ['≠', 'is_not'],
          ['<>', 'is_not'],
          ['<', 'lt'],
          ['≤', 'lte'],
          ['>', 'gt'],
          ['>=', 'gte'],
          ['is between', 'between'],
          ['like', 'contains'],
          ['does-not-contain', 'does_not_contain'],
          ['starts with', 'begins_with'],
          ['ENDS_WITH', 'ends_with'],
          ['is null', 'is_empty'],
          ['not empty', 'is_not_empty'],
          ['in', 'any_of'],
          ['has all of', 'all_of'],
          ['not in', 'none_of'],
          ['is checked', 'checked'],
          ['not checked', 'unchecked'],
          ['me', 'is_me'],
          ['is on or before', 'on_or_before'],
          ['is within', 'within'],
          ['sounds like', 'sounds_like'],
        ] as const
      ).map(([raw, canonical]) => ({ raw, canonical }))
    )
    .run(({ assert }, { raw, canonical }) => {
      assert.equal(canonicalPredicate(raw), canonical)
    })
})

test.group('filter compiler: text, enum and user predicates', () => {
  test('text {predicate}')
    .with([
      { predicate: 'is', operand: 'x', sql: 't.f1 = ?', bindings: ['x'] },
      { predicate: 'is_not', operand: 'x', sql: 't.f1 IS NULL OR t.f1 <> ?', bindings: ['x'] },
      {
        predicate: 'contains',
        operand: '50%_off!',
        sql: "t.f1 LIKE ? ESCAPE '!'",
        bindings: ['%50!%!_off!!%'],
      },
      {
        predicate: 'does_not_contain',
        operand: 'x',
        sql: "t.f1 IS NULL OR t.f1 NOT LIKE ? ESCAPE '!'",
        bindings: ['%x%'],
      },
      { predicate: 'begins_with', operand: 'ab', sql: "t.f1 LIKE ? ESCAPE '!'", bindings: ['ab%'] },
      { predicate: 'ends_with', operand: 'ab', sql: "t.f1 LIKE ? ESCAPE '!'", bindings: ['%ab'] },
      { predicate: 'is_empty', operand: undefined, sql: "t.f1 IS NULL OR t.f1 = ''", bindings: [] },
      {
        predicate: 'is_not_empty',
        operand: undefined,
        sql: "t.f1 IS NOT NULL AND t.f1 <> ''",
        bindings: [],
      },
      { predicate: 'any_of', operand: ['a', 'b'], sql: 't.f1 IN (?, ?)', bindings: ['a', 'b'] },
      { predicate: 'any_of', operand: 'a, b', sql: 't.f1 IN (?, ?)', bindings: ['a', 'b'] },
      { predicate: 'any_of', operand: [], sql: '1 = 0', bindings: [] },
      {
        predicate: 'none_of',
        operand: '["a"]',
        sql: 't.f1 IS NULL OR t.f1 NOT IN (?)',
        bindings: ['a'],
      },
      { predicate: 'none_of', operand: '', sql: '1 = 1', bindings: [] },
      { predicate: 'is', operand: 12, sql: 't.f1 = ?', bindings: ['12'] },
    ])
    .run(({ assert }, { predicate, operand, sql, bindings }) => {
      assert.deepEqual(compile(F.text, predicate, operand), { sql, bindings })
    })

  test('enum all_of: one value is that value, two distinct ones match no single value', ({
    assert,
  }) => {
    assert.deepEqual(compile(F.enum, 'all_of', ['a']), { sql: 't.f5 IN (?)', bindings: ['a'] })
    assert.deepEqual(compile(F.enum, 'all_of', ['a', 'b']), { sql: '1 = 0', bindings: [] })
    assert.deepEqual(compile(F.enum, 'all_of', []), { sql: '1 = 0', bindings: [] })
  })

  test('enum is and contains compare the stored value as text', ({ assert }) => {
    assert.deepEqual(compile(F.enum, 'is', 'a'), { sql: 't.f5 = ?', bindings: ['a'] })
    assert.deepEqual(compile(F.enum, 'contains', 'a'), {
      sql: "t.f5 LIKE ? ESCAPE '!'",
      bindings: ['%a%'],
    })
  })

  test('user is_me and is_not_me compare with the reader', ({ assert }) => {
    assert.deepEqual(compile(F.user, 'is_me'), { sql: 't.f8 = ?', bindings: ['me1'] })
    assert.deepEqual(compile(F.user, 'is_not_me'), {
      sql: 't.f8 IS NULL OR t.f8 <> ?',
      bindings: ['me1'],
    })
  })

  test('an anonymous reader (public table) is nobody: is_me matches none, is_not_me all', ({
    assert,
  }) => {
    assert.deepEqual(compile(F.user, 'is_me', undefined, null), { sql: '1 = 0', bindings: [] })
    assert.deepEqual(compile(F.user, 'is_not_me', undefined, null), {
      sql: '1 = 1',
      bindings: [],
    })
  })

  test('created_by and modified_by read the system columns', ({ assert }) => {
    assert.deepEqual(compile(F.creator, 'is', 'u2'), { sql: 't.created_by = ?', bindings: ['u2'] })
    assert.deepEqual(compile(F.creator, 'is_empty'), {
      sql: "t.created_by IS NULL OR t.created_by = ''",
      bindings: [],
    })
  })
})

test.group('filter compiler: number predicates', () => {
  test('number {predicate} {operand}')
    .with([
      { predicate: 'is', operand: '7', sql: 't.f2 = ?', bindings: [7] },
      { predicate: 'is_not', operand: 7, sql: 't.f2 IS NULL OR t.f2 <> ?', bindings: [7] },
      { predicate: 'lt', operand: '1,5', sql: 't.f2 < ?', bindings: [1.5] },
      { predicate: 'lte', operand: '-2', sql: 't.f2 <= ?', bindings: [-2] },
      { predicate: 'gt', operand: ' 3 ', sql: 't.f2 > ?', bindings: [3] },
      { predicate: 'gte', operand: '1e2', sql: 't.f2 >= ?', bindings: [100] },
      { predicate: 'between', operand: [6, 12], sql: 't.f2 >= ? AND t.f2 <= ?', bindings: [6, 12] },
      { predicate: 'between', operand: '6;12', sql: 't.f2 >= ? AND t.f2 <= ?', bindings: [6, 12] },
      {
        predicate: 'between',
        operand: '6 and 12',
        sql: 't.f2 >= ? AND t.f2 <= ?',
        bindings: [6, 12],
      },
      {
        predicate: 'between',
        operand: '[6, 12]',
        sql: 't.f2 >= ? AND t.f2 <= ?',
        bindings: [6, 12],
      },
      {
        predicate: 'between',
        operand: { from: 1, to: 2 },
        sql: 't.f2 >= ? AND t.f2 <= ?',
        bindings: [1, 2],
      },
      {
        predicate: 'between',
        operand: { min: '3', max: '4' },
        sql: 't.f2 >= ? AND t.f2 <= ?',
        bindings: [3, 4],
      },
      { predicate: 'is_empty', operand: undefined, sql: 't.f2 IS NULL', bindings: [] },
      { predicate: 'is_not_empty', operand: undefined, sql: 't.f2 IS NOT NULL', bindings: [] },
    ])
    .run(({ assert }, { predicate, operand, sql, bindings }) => {
      assert.deepEqual(compile(F.number, predicate, operand), { sql, bindings })
    })

  test('a number operand that is not a number is refused: {operand}')
    .with([{ operand: 'abc' }, { operand: '' }, { operand: '1.2.3' }])
    .run(({ assert }, { operand }) => {
      const refused = refusal(() => compiler().predicate(F.number, 'lt', operand))
      assert.equal(refused?.code, 'INVALID_PARAMETER')
      assert.include(refused?.message, 'is not a number')
    })

  test('between needs two values', ({ assert }) => {
    const refused = refusal(() => compiler().predicate(F.number, 'between', '1'))
    assert.include(refused?.message, 'between needs two values')
  })
})

test.group('filter compiler: date predicates', () => {
  test('date {predicate} {operand}')
    .with([
      {
        predicate: 'is',
        operand: '2024-01-10',
        sql: 't.f3 >= ? AND t.f3 < ?',
        bindings: ['2024-01-10', '2024-01-11'],
      },
      {
        predicate: 'on',
        operand: '10/01/2024',
        sql: 't.f3 >= ? AND t.f3 < ?',
        bindings: ['2024-01-10', '2024-01-11'],
      },
      {
        predicate: 'is_not',
        operand: '2024-01-10',
        sql: 't.f3 IS NULL OR t.f3 < ? OR t.f3 >= ?',
        bindings: ['2024-01-10', '2024-01-11'],
      },
      { predicate: 'before', operand: '2024-01-10', sql: 't.f3 < ?', bindings: ['2024-01-10'] },
      { predicate: 'after', operand: '2024-01-10', sql: 't.f3 >= ?', bindings: ['2024-01-11'] },
      {
        predicate: 'on_or_before',
        operand: '2024-01-10',
        sql: 't.f3 < ?',
        bindings: ['2024-01-11'],
      },
      {
        predicate: 'on_or_after',
        operand: '2024-01-10 18:30:00',
        sql: 't.f3 >= ?',
        bindings: ['2024-01-10'],
      },
      {
        predicate: 'is',
        operand: 'today',
        sql: 't.f3 >= ? AND t.f3 < ?',
        bindings: ['2024-03-13', '2024-03-14'],
      },
      { predicate: 'before', operand: 'now', sql: 't.f3 < ?', bindings: ['2024-03-13'] },
      { predicate: 'before', operand: 'Yesterday', sql: 't.f3 < ?', bindings: ['2024-03-12'] },
      { predicate: 'after', operand: 'tomorrow', sql: 't.f3 >= ?', bindings: ['2024-03-15'] },
      {
        predicate: 'between',
        operand: ['2024-01-01', '2024-01-31'],
        sql: 't.f3 >= ? AND t.f3 < ?',
        bindings: ['2024-01-01', '2024-02-01'],
      },
      { predicate: 'is_empty', operand: undefined, sql: 't.f3 IS NULL', bindings: [] },
      { predicate: 'is_not_empty', operand: undefined, sql: 't.f3 IS NOT NULL', bindings: [] },
    ])
    .run(({ assert }, { predicate, operand, sql, bindings }) => {
      assert.deepEqual(compile(F.date, predicate, operand), { sql, bindings })
    })

  test('within {operand}: from {from} until before {until}')
    .with([
      { operand: 'today', from: '2024-03-13', until: '2024-03-14' },
      { operand: 'yesterday', from: '2024-03-12', until: '2024-03-13' },
      { operand: 'tomorrow', from: '2024-03-14', until: '2024-03-15' },
      { operand: 'this week', from: '2024-03-11', until: '2024-03-18' },
      { operand: 'last_week', from: '2024-03-04', until: '2024-03-11' },
      { operand: 'previous week', from: '2024-03-04', until: '2024-03-11' },
      { operand: 'next_week', from: '2024-03-18', until: '2024-03-25' },
      { operand: 'past_week', from: '2024-03-07', until: '2024-03-14' },
      { operand: 'this_month', from: '2024-03-01', until: '2024-04-01' },
      { operand: 'last_month', from: '2024-02-01', until: '2024-03-01' },
      { operand: 'previous-month', from: '2024-02-01', until: '2024-03-01' },
      { operand: 'next_month', from: '2024-04-01', until: '2024-05-01' },
      { operand: 'this_year', from: '2024-01-01', until: '2025-01-01' },
      { operand: 'last 7 days', from: '2024-03-07', until: '2024-03-14' },
      { operand: 'past_30_days', from: '2024-02-13', until: '2024-03-14' },
      { operand: 'next 3 days', from: '2024-03-13', until: '2024-03-16' },
      { operand: { within: 'last_n_days', n: 2 }, from: '2024-03-12', until: '2024-03-14' },
      { operand: { period: 'next_n_days', days: '1' }, from: '2024-03-13', until: '2024-03-14' },
      { operand: { value: 'this_week' }, from: '2024-03-11', until: '2024-03-18' },
    ])
    .run(({ assert }, { operand, from, until }) => {
      assert.deepEqual(compile(F.date, 'within', operand), {
        sql: 't.f3 >= ? AND t.f3 < ?',
        bindings: [from, until],
      })
    })

  test('within an unknown period is refused: {label}')
    .with([
      { label: 'fortnight', operand: 'fortnight' },
      { label: 'last 0 days', operand: { within: 'last_n_days', n: 0 } },
    ])
    .run(({ assert }, { operand }) => {
      const refused = refusal(() => compiler().predicate(F.date, 'within', operand))
      assert.equal(refused?.code, 'INVALID_PARAMETER')
      assert.include(refused?.message, 'unknown period')
    })

  test('a date operand that is not a date is refused', ({ assert }) => {
    const refused = refusal(() => compiler().predicate(F.date, 'before', '2024-02-31'))
    assert.include(refused?.message, 'is not a date')
  })

  test('created_time reads created_at', ({ assert }) => {
    assert.deepEqual(compile(F.created, 'before', '2024-01-10'), {
      sql: 't.created_at < ?',
      bindings: ['2024-01-10'],
    })
  })
})

test.group('filter compiler: checkbox, list, link and files predicates', () => {
  test('checkbox {predicate} {operand}')
    .with([
      { predicate: 'checked', operand: undefined, checked: true },
      { predicate: 'unchecked', operand: undefined, checked: false },
      { predicate: 'is', operand: 'yes', checked: true },
      { predicate: 'is', operand: 'Checked', checked: true },
      { predicate: 'is', operand: '0', checked: false },
      { predicate: 'is_not', operand: 'true', checked: false },
      { predicate: 'is_not', operand: 'off', checked: true },
    ])
    .run(({ assert }, { predicate, operand, checked }) => {
      assert.deepEqual(
        compile(F.bool, predicate, operand),
        checked
          ? { sql: 't.f4 = ?', bindings: [true] }
          : { sql: 't.f4 IS NULL OR t.f4 = ?', bindings: [false] }
      )
    })

  const any = (side: string, marks: string) =>
    `SELECT s.row_id FROM ${side} s WHERE s.value IN (${marks})`

  test('multiple enum {predicate} reads the side table')
    .with([
      {
        predicate: 'any_of',
        sql: `t.id IN (${any('tt_1_m6', '?, ?')})`,
        bindings: ['a', 'b'],
      },
      {
        predicate: 'none_of',
        sql: `t.id NOT IN (${any('tt_1_m6', '?, ?')})`,
        bindings: ['a', 'b'],
      },
      {
        predicate: 'all_of',
        sql: `t.id IN (${any('tt_1_m6', '?, ?')} GROUP BY s.row_id HAVING COUNT(*) = ?)`,
        bindings: ['a', 'b', 2],
      },
      {
        predicate: 'is',
        sql: `t.id IN (${any('tt_1_m6', '?, ?')} GROUP BY s.row_id HAVING COUNT(*) = ?) AND t.id NOT IN (SELECT s2.row_id FROM tt_1_m6 s2 WHERE s2.value NOT IN (?, ?))`,
        bindings: ['a', 'b', 2, 'a', 'b'],
      },
      {
        predicate: 'is_not',
        sql: `NOT (t.id IN (${any('tt_1_m6', '?, ?')} GROUP BY s.row_id HAVING COUNT(*) = ?) AND t.id NOT IN (SELECT s2.row_id FROM tt_1_m6 s2 WHERE s2.value NOT IN (?, ?)))`,
        bindings: ['a', 'b', 2, 'a', 'b'],
      },
    ])
    .run(({ assert }, { predicate, sql, bindings }) => {
      assert.deepEqual(compile(F.multi, predicate, ['a', 'b', 'a']), { sql, bindings })
    })

  test('multiple enum contains and does_not_contain search the stored list text', ({ assert }) => {
    assert.deepEqual(compile(F.multi, 'contains', 'a'), {
      sql: "t.f6 LIKE ? ESCAPE '!'",
      bindings: ['%a%'],
    })
    assert.deepEqual(compile(F.multi, 'does_not_contain', 'a'), {
      sql: "t.f6 IS NULL OR t.f6 NOT LIKE ? ESCAPE '!'",
      bindings: ['%a%'],
    })
  })

  test('an empty list matches every row for none_of and is_not, no row otherwise', ({ assert }) => {
    for (const predicate of ['none_of', 'is_not'])
      assert.deepEqual(compile(F.multi, predicate, []), { sql: '1 = 1', bindings: [] })
    for (const predicate of ['any_of', 'all_of', 'is'])
      assert.deepEqual(compile(F.multi, predicate, ''), { sql: '1 = 0', bindings: [] })
  })

  test('link lists are row ids; contains searches the caption column', ({ assert }) => {
    assert.deepEqual(compile(F.link, 'any_of', '5, 6'), {
      sql: `t.id IN (${any('tt_1_m7', '?, ?')})`,
      bindings: [5, 6],
    })
    assert.deepEqual(compile(F.link, 'contains', 'Acme'), {
      sql: "t.f7_t LIKE ? ESCAPE '!'",
      bindings: ['%Acme%'],
    })
    const refused = refusal(() => compiler().predicate(F.link, 'any_of', ['x']))
    assert.include(refused?.message, '"x" is not a row id')
  })

  test('list fields: is_empty and is_not_empty test the stored list', ({ assert }) => {
    assert.deepEqual(compile(F.link, 'is_empty'), { sql: 't.f7 IS NULL', bindings: [] })
    assert.deepEqual(compile(F.multi, 'is_not_empty'), { sql: 't.f6 IS NOT NULL', bindings: [] })
  })

  test('files: only is_empty and is_not_empty', ({ assert }) => {
    assert.deepEqual(compile(F.files, 'is_empty'), {
      sql: "t.f9 IS NULL OR t.f9 = ''",
      bindings: [],
    })
    assert.deepEqual(compile(F.files, 'is_not_empty'), {
      sql: "t.f9 IS NOT NULL AND t.f9 <> ''",
      bindings: [],
    })
  })
})

/** A filter on `target` as the wire carries it. */
const filter = (target: FieldDef, predicate: string, operand?: unknown, filterType = 'text') => ({
  field_id: target.id,
  filter_type: filterType,
  json: { predicate, operand },
})

const compileGroup = (group: unknown) => {
  const compiled = compiler().compile(normalizeGroup(group))
  return {
    where: compiled.where
      ? { sql: plain(compiled.where.sql), bindings: compiled.where.bindings }
      : null,
    orderBy: compiled.orderBy,
    used: compiled.usedFields.map((used) => used.id),
  }
}

test.group('filter compiler: groups, sorts and wire forms', () => {
  test('AND joins the filters of a group, each in parentheses', ({ assert }) => {
    const compiled = compileGroup({
      operator: 'and',
      filters: [filter(F.text, 'is', 'x'), filter(F.number, 'gt', 1)],
    })
    assert.deepEqual(compiled.where, { sql: '(t.f1 = ?) AND (t.f2 > ?)', bindings: ['x', 1] })
    assert.deepEqual(compiled.used, [1, 2])
  })

  test('OR joins them with OR', ({ assert }) => {
    const compiled = compileGroup({
      operator: 'OR',
      filters: [filter(F.text, 'is', 'x'), filter(F.text, 'is_empty')],
    })
    assert.equal(compiled.where?.sql, "(t.f1 = ?) OR (t.f1 IS NULL OR t.f1 = '')")
  })

  test('a nested group is one parenthesised part of its parent', ({ assert }) => {
    const compiled = compileGroup({
      operator: 'or',
      filters: [
        filter(F.text, 'is', 'x'),
        {
          filter_type: 'group',
          operator: 'and',
          filters: [filter(F.enum, 'is', 'a'), filter(F.bool, 'checked')],
        },
      ],
    })
    assert.deepEqual(compiled.where, {
      sql: '(t.f1 = ?) OR ((t.f5 = ?) AND (t.f4 = ?))',
      bindings: ['x', 'a', true],
    })
  })

  test('a nested group may carry its operator and filters in json', ({ assert }) => {
    const compiled = compileGroup({
      operator: 'and',
      filters: [
        filter(F.number, 'lt', 1),
        {
          json: { operator: 'or', filters: [filter(F.number, 'gt', 9), filter(F.number, 'is', 5)] },
        },
      ],
    })
    assert.equal(compiled.where?.sql, '(t.f2 < ?) AND ((t.f2 > ?) OR (t.f2 = ?))')
  })

  test('one filter is not wrapped; an empty group filters nothing', ({ assert }) => {
    assert.equal(compileGroup({ filters: [filter(F.text, 'is', 'x')] }).where?.sql, 't.f1 = ?')
    assert.isNull(compileGroup({ operator: 'and', filters: [] }).where)
    assert.isNull(compiler().compile(null).where)
  })

  test('group-by comes before sorts; sorts do not filter; a link sorts by its caption', ({
    assert,
  }) => {
    const compiled = compileGroup({
      operator: 'and',
      filters: [
        filter(F.number, 'desc', undefined, 'sort'),
        filter(F.link, 'asc', undefined, 'order'),
        filter(F.enum, '', undefined, 'groupby'),
        filter(F.created, 'DESC', undefined, 'sort'),
      ],
    })
    assert.isNull(compiled.where)
    assert.deepEqual(compiled.orderBy, [
      { column: 'f5', direction: 'asc' },
      { column: 'f2', direction: 'desc' },
      { column: 'f7_t', direction: 'asc' },
      { column: 'created_at', direction: 'desc' },
    ])
    assert.deepEqual(compiled.used, [2, 7, 5, 11])
  })

  test('a sort direction other than asc or desc is refused; a field without a column is not sorted', ({
    assert,
  }) => {
    assert.include(
      refusal(() => compileGroup({ filters: [filter(F.number, 'up', undefined, 'sort')] }))
        ?.message,
      'Unknown sort direction'
    )
    assert.include(
      refusal(() => compileGroup({ filters: [filter(F.comments, 'asc', undefined, 'sort')] }))
        ?.message,
      'cannot be sorted'
    )
  })

  test('a field of another table is refused', ({ assert }) => {
    const refused = refusal(() =>
      compileGroup({ filters: [{ field_id: 99, json: { predicate: 'is', operand: 'x' } }] })
    )
    assert.deepEqual(refused, {
      code: 'INVALID_PARAMETER',
      message: 'Filter field 99 is not a field of this table',
    })
  })

  test('a group arrives as a JSON text, a JSON object or bracket form, the same', ({ assert }) => {
    const group = { operator: 'and', filters: [filter(F.text, 'contains', 'a')] }
    const bracket = {
      operator: 'and',
      filters: {
        0: { field_id: '1', filter_type: 'text', json: { predicate: 'contains', operand: 'a' } },
      },
    }
    const expected = normalizeGroup(group)
    assert.deepEqual(normalizeGroup(JSON.stringify(group)), expected)
    assert.deepEqual(normalizeGroup(bracket), expected)
    assert.deepEqual(expected.filters[0], {
      id: undefined,
      field_id: 1,
      filter_type: 'text',
      json: { predicate: 'contains', operand: 'a' },
    })
  })

  test('a filter may carry predicate and operand beside json, and json as a JSON text', ({
    assert,
  }) => {
    assert.deepEqual(normalizeFilter({ fieldId: 3, predicate: 'before', operand: 'today' }).json, {
      predicate: 'before',
      operand: 'today',
    })
    assert.deepEqual(
      normalizeFilter({ field_id: 3, json: '{"predicate":"on","operand":"2024-01-01"}' }).json,
      { predicate: 'on', operand: '2024-01-01' }
    )
    assert.equal(normalizeFilter({ field_id: 3 }).filter_type, 'text')
  })

  test('the operator defaults to and; another operator is refused', ({ assert }) => {
    assert.equal(normalizeGroup({ filters: [] }).operator, 'and')
    assert.equal(normalizeGroup({ operator: '', filters: '' }).operator, 'and')
    assert.equal(refusal(() => normalizeGroup({ operator: 'xor' }))?.code, 'INVALID_PARAMETER')
  })

  test('a filter without a field is refused; a group that is not an object is refused', ({
    assert,
  }) => {
    assert.deepEqual(
      refusal(() => normalizeFilter({ json: { predicate: 'is' } })),
      {
        code: 'INVALID_PARAMETER',
        message: 'A filter needs a field_id',
      }
    )
    assert.equal(refusal(() => normalizeGroup('not json'))?.code, 'INVALID_PARAMETER')
  })

  test('saved filters keep their id; a normalized group compiles as the wire one', ({ assert }) => {
    const group: FilterGroupSpec = normalizeGroup({
      id: 4,
      filters: [{ id: 9, ...filter(F.number, '>=', '2') }],
    })
    assert.equal(group.id, 4)
    assert.equal(group.filters[0].id, 9)
    assert.deepEqual(compileGroup(group).where, { sql: 't.f2 >= ?', bindings: [2] })
  })
})
