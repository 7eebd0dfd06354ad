import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import User from '#models/user'
import { serializeUserInfo } from '#core/serializers/user_info_serializer'

/** A users row's model, as the session lookup hands it to getUserInfo (no database needed). */
function userModel() {
  const user = new User()
  user.merge({
    id: 7,
    code: 'ada',
    email: 'ada@example.test',
    phone: null,
    firstName: 'Ada',
    lastName: 'L',
    prefs: { lang: 'fr' },
    rights: {},
    colors: {},
    projectId: 0,
    isAdmin: false,
    sstamp: 100,
    uimgStamp: 0,
    lastConnectionAt: DateTime.fromSeconds(2000),
    previousConnectionAt: DateTime.fromSeconds(1000),
    createdAt: DateTime.fromSeconds(0),
  })
  return user
}

/**
 * serializeUserInfo answers the same frozen object again while nothing it is made from changed
 * (api.php then writes its JSON text once), and a new one as soon as anything did.
 */
test.group('getUserInfo: userInfo made again only when its sources change', () => {
  test('same user, same contributed fields: the same frozen object', ({ assert }) => {
    const user = userModel()
    const first = serializeUserInfo(user, { nbBooks: 2 })
    assert.isTrue(Object.isFrozen(first))
    assert.strictEqual(serializeUserInfo(user, { nbBooks: 2 }), first)
    assert.deepInclude(first, { nbBooks: 2, uimgStamp: 0, sstamp: 100, firstTime: false })
    assert.strictEqual((first.userPrefs as Record<string, unknown>).lang, 'fr')
  })

  test('a contributed field, the image stamp, firstTime or sstamp changed: a new object', ({
    assert,
  }) => {
    const user = userModel()
    const first = serializeUserInfo(user, { nbBooks: 2 })
    const moreBooks = serializeUserInfo(user, { nbBooks: 3 })
    assert.notStrictEqual(moreBooks, first)
    assert.strictEqual(moreBooks.nbBooks, 3)
    const another = serializeUserInfo(user, { nbBooks: 3, nbContacts: 1 })
    assert.deepInclude(another, { nbBooks: 3, nbContacts: 1 })

    user.uimgStamp = 5
    const image = serializeUserInfo(user, { nbBooks: 3, nbContacts: 1 })
    assert.strictEqual(image.uimgStamp, 5)

    user.previousConnectionAt = null
    assert.isTrue(serializeUserInfo(user, { nbBooks: 3, nbContacts: 1 }).firstTime)

    user.sstamp = 101
    user.prefs = { lang: 'de' }
    const edited = serializeUserInfo(user, { nbBooks: 3, nbContacts: 1 })
    assert.strictEqual(edited.sstamp, 101)
    assert.strictEqual((edited.userPrefs as Record<string, unknown>).lang, 'de')
  })

  test('another model of the same row is answered its own object', ({ assert }) => {
    const first = serializeUserInfo(userModel(), { nbBooks: 2 })
    const second = serializeUserInfo(userModel(), { nbBooks: 2 })
    assert.notStrictEqual(second, first)
    assert.deepEqual(second, first)
  })
})
