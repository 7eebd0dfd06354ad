import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import { ERROR_CATALOGUE } from '#core/rpc/errors'

test.group('error catalogue', () => {
  test('docs/errors.md lists every code with its number, and nothing else', async ({ assert }) => {
    const doc = await readFile(app.makePath('docs/errors.md'), 'utf8')
    const documented = new Map(
      [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d+) \|/gm)].map((match) => [
        match[1],
        Number(match[2]),
      ])
    )
    const catalogue = new Map(
      Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, entry.process])
    )
    assert.deepEqual(Object.fromEntries(documented), Object.fromEntries(catalogue))
  })

  test('process numbers are unique', ({ assert }) => {
    const numbers = Object.values(ERROR_CATALOGUE).map((entry) => entry.process)
    assert.equal(new Set(numbers).size, numbers.length)
  })
})
