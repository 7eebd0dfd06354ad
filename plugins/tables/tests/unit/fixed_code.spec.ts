import { test } from '@japa/runner'
import {
  FIXED_CODE_LENGTH,
  fixedCodeBase,
  fixedCodeCandidate,
} from '#plugins/tables/lib/fixed_code'

test.group('tables: fixed codes made from names', () => {
  test('one plain word is the name in lower case', ({ assert }) => {
    assert.equal(fixedCodeBase('Attachments'), 'attachments')
    assert.equal(fixedCodeBase('description'), 'description')
  })

  test('accents fold, other characters become one "_", none at the ends', ({ assert }) => {
    assert.equal(fixedCodeBase('  Due   Date '), 'due_date')
    assert.equal(fixedCodeBase('Équipe / Rôle'), 'equipe_role')
    assert.equal(fixedCodeBase('Prix (€)'), 'prix')
    assert.equal(fixedCodeBase('ﬁle_Name-2'), 'file_name_2')
    assert.equal(fixedCodeBase('İstanbul'), 'istanbul')
    assert.equal(fixedCodeBase('Вложения'), 'вложения')
    assert.equal(fixedCodeBase('名前'), '名前')
  })

  test('a name without a letter or digit gives "field"', ({ assert }) => {
    assert.equal(fixedCodeBase('!!!'), 'field')
    assert.equal(fixedCodeBase('😀'), 'field')
  })

  test('candidates: the base, then base_2, base_3; never longer than the column', ({ assert }) => {
    assert.equal(fixedCodeCandidate('notes', 1), 'notes')
    assert.equal(fixedCodeCandidate('notes', 2), 'notes_2')
    const long = fixedCodeBase('x'.repeat(300))
    assert.lengthOf(fixedCodeCandidate(long, 1), FIXED_CODE_LENGTH)
    assert.equal(fixedCodeCandidate(long, 12), 'x'.repeat(FIXED_CODE_LENGTH - 3) + '_12')
    // Cut by code points, and no "_" left before the suffix.
    const cyrillic = fixedCodeCandidate('я'.repeat(61) + '_b', 2)
    assert.equal(cyrillic, 'я'.repeat(61) + '_2')
    assert.lengthOf(Array.from(cyrillic), 63)
  })
})
