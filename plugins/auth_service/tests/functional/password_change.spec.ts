import { test } from '@japa/runner'
import { authUser, post, resetAuthState, TEST_PASSWORD } from '../helpers.js'

test.group('auth_service: forced password change', (group) => {
  group.each.setup(() => resetAuthState())

  test('mustChangePassword comes with a passwordResetToken that changes the password once', async ({
    assert,
  }) => {
    const user = await authUser({ mustChangePassword: true })
    const first = await post('/login', { login: user.email, password: TEST_PASSWORD })
    assert.equal(first.status, 200, first.text)
    assert.isTrue(first.body.mustChangePassword)
    assert.isString(first.body.passwordResetToken)
    assert.isString(first.body.jwt)

    const tooShort = await post('/password/change', {
      password_reset_token: first.body.passwordResetToken,
      password: 'x',
    })
    assert.equal(tooShort.status, 422)
    assert.equal(tooShort.body.error, 'validation_error')
    assert.isArray(tooShort.body.errors.password)

    const changed = await post('/password/change', {
      password_reset_token: first.body.passwordResetToken,
      password: 'a brand new passphrase',
    })
    assert.equal(changed.status, 200, changed.text)
    const again = await post('/password/change', {
      password_reset_token: first.body.passwordResetToken,
      password: 'yet another passphrase',
    })
    assert.equal(again.body.error, 'invalid_setup_token')

    assert.equal(
      await post('/login', { login: user.email, password: TEST_PASSWORD }).then(
        (answer) => answer.status
      ),
      401
    )
    const next = await post('/login', { login: user.email, password: 'a brand new passphrase' })
    assert.equal(next.status, 200, next.text)
    assert.isFalse(next.body.mustChangePassword)
    assert.notProperty(next.body, 'passwordResetToken')
  })
})
