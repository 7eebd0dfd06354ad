import { test } from '@japa/runner'
import { collapseSlashes } from '#core/http/node_server'

test.group('collapseSlashes', () => {
  test('collapses runs of slashes in the path of {$self}')
    .with([
      { url: '//dev/dbi/in/x', expected: '/dev/dbi/in/x' },
      { url: '/dev//api.php?req=a', expected: '/dev/api.php?req=a' },
      { url: '///live///api.php/', expected: '/live/api.php/' },
    ])
    .run(({ assert }, { url, expected }) => {
      assert.equal(collapseSlashes(url), expected)
    })

  test('leaves the query string and clean paths untouched', ({ assert }) => {
    assert.equal(collapseSlashes('/live/api.php?next=//x//y'), '/live/api.php?next=//x//y')
    assert.equal(collapseSlashes('/live/api.php'), '/live/api.php')
  })
})
