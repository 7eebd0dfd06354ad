import { test } from '@japa/runner'
import {
  NEED_RIGHT,
  RIGHT_ADMIN,
  RIGHT_OWNER,
  RIGHT_READ,
  RIGHT_READWRITE,
  RIGHT_READWRITEDELETE,
  isValidRight,
} from '../../rights.js'
import {
  coercePref,
  readPrefChanges,
  OWNER_PREF_KINDS,
  USER_PREF_KINDS,
} from '../../models/prefs.js'
import { toUnixSeconds } from '../../services/event_service.js'
import { firstWord } from '../../services/message_writer.js'
import { memberOf, prefsOf } from '../../validators/params.js'

test.group('rights', () => {
  test('the scale is ordinal and the owner holds RIGHT_ADMIN (4)', ({ assert }) => {
    assert.deepEqual(
      [RIGHT_READ, RIGHT_READWRITE, RIGHT_READWRITEDELETE, RIGHT_ADMIN],
      [1, 2, 3, 4]
    )
    assert.strictEqual(RIGHT_OWNER, 4)
    assert.deepEqual(NEED_RIGHT, { read: 1, write: 2, delete: 3, admin: 4 })
    assert.isTrue(isValidRight(1))
    assert.isTrue(isValidRight(4))
    assert.isFalse(isValidRight(0))
    assert.isFalse(isValidRight(5))
    assert.isFalse(isValidRight(2.5))
  })
})

test.group('parameter helpers', () => {
  test('prefs are coerced to their spec type', ({ assert }) => {
    assert.strictEqual(coercePref('boolean', 'TRUE'), true)
    assert.strictEqual(coercePref('boolean', '0'), false)
    assert.isUndefined(coercePref('boolean', 'maybe'))
    assert.strictEqual(coercePref('integer', '12'), 12)
    assert.isUndefined(coercePref('integer', '1.5'))
    assert.isUndefined(coercePref('integer', ''))
    assert.isNull(coercePref('nullableString', ''))
  })

  test('syncWithHubic is accepted for syncWithStorage; unknown keys are reported', ({ assert }) => {
    const { valid, invalid } = readPrefChanges(USER_PREF_KINDS, {
      syncWithHubic: '1',
      bogus: 'x',
      maxMsgsOffline: 'ten',
    })
    assert.deepEqual(valid, { syncWithStorage: true })
    assert.deepEqual(invalid.sort(), ['bogus', 'maxMsgsOffline'])
  })

  test('event times: seconds, milliseconds, ISO dates', ({ assert }) => {
    assert.strictEqual(toUnixSeconds('1700000000'), 1_700_000_000)
    assert.strictEqual(toUnixSeconds(1_700_000_000_000), 1_700_000_000)
    assert.strictEqual(toUnixSeconds('2023-11-14T22:13:20Z'), 1_700_000_000)
    assert.isNull(toUnixSeconds('tomorrow'))
  })

  test('prefs: top-level scalar keys, overridden by the nested object', ({ assert }) => {
    const input = {
      b_c: 'x',
      oCoverColor: 'red',
      title: 'flat',
      oCoverType: { nested: 'ignored' },
      ownerPrefs: { title: 'nested' },
    }
    assert.deepEqual(prefsOf(input, 'ownerPrefs', OWNER_PREF_KINDS), {
      oCoverColor: 'red',
      title: 'nested',
    })
    assert.isUndefined(prefsOf({ b_c: 'x' }, 'ownerPrefs', OWNER_PREF_KINDS))
    assert.deepEqual(prefsOf({ syncWithHubic: '1' }, 'userPrefs', USER_PREF_KINDS), undefined)
    assert.deepEqual(
      prefsOf({ syncWithHubic: '1' }, 'userPrefs', USER_PREF_KINDS, ['syncWithHubic']),
      { syncWithHubic: '1' }
    )
  })

  test('the member is member, then login, then u_invite', ({ assert }) => {
    assert.strictEqual(memberOf({ member: 'a', login: 'b', u_invite: 'c' }), 'a')
    assert.strictEqual(memberOf({ login: 'b', u_invite: 'c' }), 'b')
    assert.strictEqual(memberOf({ u_invite: 'c' }), 'c')
    assert.throws(() => memberOf({}), /Missing parameter: member/)
  })

  test('the first word of a message names the book when b_c is absent', ({ assert }) => {
    assert.strictEqual(firstWord('  groceries milk eggs'), 'groceries')
    assert.strictEqual(firstWord(''), '')
  })
})
