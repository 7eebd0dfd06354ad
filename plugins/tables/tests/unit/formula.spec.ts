import { test } from '@japa/runner'
import { FormulaError, evaluate, parseFormula, references } from '../../lib/formula.js'
import { ComputedFields } from '../../services/computed_fields.js'
import type { FieldDef, FieldOptions, FieldType } from '../../lib/field_types.js'
import type { CategoryMeta, MetaService } from '../../services/meta_service.js'

type Value = string | number | boolean | null

/** Evaluates a formula with field values by reference name. */
const run = (source: string, values: Record<string, Value> = {}) =>
  evaluate(parseFormula(source), (name) => (name in values ? values[name] : null))

/** The FormulaError a formula's parse throws (its message), or null when it parses. */
const parseError = (source: string) => {
  try {
    parseFormula(source)
    return null
  } catch (error) {
    if (!(error instanceof FormulaError)) throw error
    return error.message
  }
}

test.group('formula: literals and references', () => {
  test('{source} is {expected}')
    .with([
      { source: '42', expected: 42 },
      { source: '1.5', expected: 1.5 },
      { source: '.5', expected: 0.5 },
      { source: '5.', expected: 5 },
      { source: '1e3', expected: 1000 },
      { source: '2.5E-1', expected: 0.25 },
      { source: '"text"', expected: 'text' },
      { source: "'single'", expected: 'single' },
      { source: '"say \\"hi\\""', expected: 'say "hi"' },
      { source: 'TRUE', expected: true },
      { source: 'false', expected: false },
      { source: '  7  ', expected: 7 },
    ])
    .run(({ assert }, { source, expected }) => {
      assert.strictEqual(run(source), expected)
    })

  test('a reference reads the field value by the name between braces, trimmed', ({ assert }) => {
    assert.strictEqual(run('{ Price }', { Price: 12 }), 12)
    assert.strictEqual(run('{f12}', { f12: 'x' }), 'x')
  })

  test('an unknown reference is empty (null)', ({ assert }) => {
    assert.isNull(run('{Missing}'))
    assert.strictEqual(run('{Missing} + 1'), 1)
  })

  test('references() lists every field reference, in order, nested ones included', ({ assert }) => {
    const tree = parseFormula('IF({A} > 1, -{B}, CONCAT({C}, "x")) & {A}')
    assert.deepEqual(references(tree), ['A', 'B', 'C', 'A'])
  })
})

test.group('formula: operators', () => {
  test('{source} is {expected}')
    .with([
      { source: '1 + 2', expected: 3 },
      { source: '10 - 3 - 2', expected: 5 },
      { source: '2 * 3 + 1', expected: 7 },
      { source: '1 + 2 * 3', expected: 7 },
      { source: '(1 + 2) * 3', expected: 9 },
      { source: '7 / 2', expected: 3.5 },
      { source: '7 % 4', expected: 3 },
      { source: '100 / 10 / 5', expected: 2 },
      { source: '-2 * 3', expected: -6 },
      { source: '+"4" + 1', expected: 5 },
      { source: '- -2', expected: 2 },
      { source: '"a" & "b"', expected: 'ab' },
      { source: '"n" & 1 + 1', expected: 'n2' },
      { source: '1 + 2 & 3', expected: '33' },
      { source: '1 / 0', expected: null },
      { source: '5 % 0', expected: null },
    ])
    .run(({ assert }, { source, expected }) => {
      assert.strictEqual(run(source), expected)
    })

  test('comparison {source} is {expected}')
    .with([
      { source: '1 + 2 = 3', expected: true },
      { source: '3 == 3', expected: true },
      { source: '3 != 4', expected: true },
      { source: '3 <> 3', expected: false },
      { source: '2 < 3', expected: true },
      { source: '3 <= 3', expected: true },
      { source: '4 > 3', expected: true },
      { source: '3 >= 4', expected: false },
      // Text against text compares as text; a number on either side compares as numbers.
      { source: '"10" < "9"', expected: true },
      { source: '10 < "9"', expected: false },
      { source: '"abc" = 0', expected: true },
      { source: '"b" > "a"', expected: true },
      { source: '"a" = "A"', expected: false },
    ])
    .run(({ assert }, { source, expected }) => {
      assert.strictEqual(run(source), expected)
    })

  test('arithmetic reads empty as 0, booleans as 1/0 and text that is not a number as 0', ({
    assert,
  }) => {
    assert.strictEqual(run('{A} + 1', { A: null }), 1)
    assert.strictEqual(run('{A} + 1', { A: '' }), 1)
    assert.strictEqual(run('{A} + 1', { A: true }), 2)
    assert.strictEqual(run('{A} + 1', { A: 'abc' }), 1)
    assert.strictEqual(run('{A} * 2', { A: '2.5' }), 5)
  })

  test('& reads empty as no text and numbers as their text', ({ assert }) => {
    assert.strictEqual(run('{A} & "-" & {B}', { A: null, B: 1.5 }), '-1.5')
    assert.strictEqual(run('{A} & ""', { A: true }), 'true')
  })
})

test.group('formula: functions', () => {
  test('{source} is {expected}')
    .with([
      { source: 'IF(1, "y", "n")', expected: 'y' },
      { source: 'IF(0, "y", "n")', expected: 'n' },
      { source: 'IF("", "y")', expected: null },
      { source: 'IF("0", "y", "n")', expected: 'y' },
      { source: 'if(TRUE, 1, 2)', expected: 1 },
      { source: 'AND(1, "x", TRUE)', expected: true },
      { source: 'AND(1, 0)', expected: false },
      { source: 'AND()', expected: true },
      { source: 'OR(0, "", FALSE)', expected: false },
      { source: 'OR(0, 2)', expected: true },
      { source: 'OR()', expected: false },
      { source: 'NOT(0)', expected: true },
      { source: 'NOT("x")', expected: false },
      { source: 'CONCAT("a", 1, BLANK(), TRUE)', expected: 'a1true' },
      { source: 'UPPER("abc")', expected: 'ABC' },
      { source: 'LOWER("AbC")', expected: 'abc' },
      { source: 'UPPER(BLANK())', expected: '' },
      { source: 'LEN("hello")', expected: 5 },
      { source: 'LEN(12345)', expected: 5 },
      { source: 'LEN(BLANK())', expected: 0 },
      { source: 'TRIM("  a b  ")', expected: 'a b' },
      { source: 'LEFT("hello", 2)', expected: 'he' },
      { source: 'RIGHT("hello", 3)', expected: 'llo' },
      { source: 'RIGHT("hello", 0)', expected: '' },
      { source: 'ROUND(2.5)', expected: 3 },
      { source: 'ROUND(1.2345, 2)', expected: 1.23 },
      { source: 'ROUND(1234.5, -2)', expected: 1200 },
      { source: 'ABS(-4)', expected: 4 },
      { source: 'MIN(3, "1", 2)', expected: 1 },
      { source: 'MAX(3, "10", TRUE)', expected: 10 },
      { source: 'MIN()', expected: null },
      { source: 'MAX()', expected: null },
      { source: 'SUM(1, "2", "x", TRUE)', expected: 4 },
      { source: 'SUM()', expected: 0 },
      { source: 'AVG(1, 2)', expected: 1.5 },
      { source: 'AVG()', expected: null },
      { source: 'BLANK()', expected: null },
    ])
    .run(({ assert }, { source, expected }) => {
      assert.strictEqual(run(source), expected)
    })

  test('IF evaluates only the branch it takes', ({ assert }) => {
    const read: string[] = []
    const value = evaluate(parseFormula('IF({A}, {B}, {C})'), (name) => {
      read.push(name)
      return name === 'A' ? 1 : name
    })
    assert.strictEqual(value, 'B')
    assert.deepEqual(read, ['A', 'B'])
  })

  test('function names are case-insensitive', ({ assert }) => {
    assert.strictEqual(run('concat("a", "b")'), 'ab')
    assert.strictEqual(run('Len("abc")'), 3)
  })
})

test.group('formula: errors', () => {
  test('{source} does not parse: {message}')
    .with([
      { source: '"open', message: 'unterminated string' },
      { source: '{Price', message: 'unterminated field reference' },
      { source: '1 # 2', message: 'unexpected character "#"' },
      { source: '1 + .', message: 'unexpected character "."' },
      { source: 'NOPE(1)', message: 'unknown function NOPE' },
      { source: '1 +', message: 'unexpected end of formula' },
      { source: '', message: 'unexpected end of formula' },
      { source: '1 2', message: 'unexpected "2"' },
      { source: '(1 + 2', message: 'expected )' },
      { source: 'UPPER "a"', message: 'expected (' },
      { source: 'CONCAT(1,)', message: 'unexpected ")"' },
      { source: 'Price', message: 'unknown function Price' },
    ])
    .run(({ assert }, { source, message }) => {
      assert.equal(parseError(source), message)
    })
})

/** A category holding `fields` (only what formula columns read). */
const category = (fields: Partial<FieldDef>[]): CategoryMeta =>
  ({
    id: 1,
    fields: fields.map((field, index) => ({
      id: index + 1,
      categoryId: 1,
      name: `Field ${index + 1}`,
      code: null,
      fixedCode: `f${index + 1}`,
      order: index,
      description: null,
      readOnly: false,
      options: {},
      column: `f${index + 1}`,
      lastModified: 0,
      ...field,
    })),
  }) as unknown as CategoryMeta

const formulaField = (formula: string, options: FieldOptions = {}) => ({
  name: 'Result',
  type: 'formula' as FieldType,
  options: { formula, ...options },
})

test.group('formula columns (ComputedFields.computeFormulas)', (group) => {
  let computed: ComputedFields
  group.setup(() => {
    computed = new ComputedFields({} as MetaService)
  })

  test('references read fields by name (any case), by f<id> and by code', ({ assert }) => {
    const meta = category([
      { name: 'Price', type: 'double' },
      { name: 'Qty', type: 'integer', code: 'qty' },
      formulaField('{price} * {qty} + {f1}'),
    ])
    const row: Record<string, unknown> = { f1: 2.5, f2: 4 }
    computed.computeFormulas(meta, row)
    assert.strictEqual(row.f3, 12.5)
  })

  test('a number result that is not finite, empty or text is stored as null', ({ assert }) => {
    const meta = category([
      { name: 'A', type: 'double' },
      formulaField('1 / {A}'),
      formulaField('"x" & {A}'),
      formulaField('BLANK()'),
    ])
    const row: Record<string, unknown> = { f1: 0 }
    computed.computeFormulas(meta, row)
    assert.isNull(row.f2)
    assert.isNull(row.f3)
    assert.isNull(row.f4)
  })

  test('a boolean result is stored as 1 or 0; a text result as its text', ({ assert }) => {
    const meta = category([
      { name: 'A', type: 'integer' },
      formulaField('{A} > 1'),
      formulaField('{A} > 1', { resultType: 'text' }),
      formulaField('{A} * 2', { resultType: 'text' }),
    ])
    const row: Record<string, unknown> = { f1: 3 }
    computed.computeFormulas(meta, row)
    assert.strictEqual(row.f2, 1)
    assert.strictEqual(row.f3, 'true')
    assert.strictEqual(row.f4, '6')
  })

  test('list cells are read as their text; a formula that does not parse is empty', ({
    assert,
  }) => {
    const meta = category([
      { name: 'Tags', type: 'enum', options: { multiple: true } },
      formulaField('UPPER({Tags})', { resultType: 'text' }),
      formulaField('1 +'),
    ])
    const row: Record<string, unknown> = { f1: '["a","b"]', f3: 99 }
    computed.computeFormulas(meta, row)
    assert.strictEqual(row.f2, 'A, B')
    assert.isNull(row.f3)
  })
})
