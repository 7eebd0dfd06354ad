import { test } from '@japa/runner'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { scaffoldPlugin } from '#core/scaffold/plugin_scaffold'

async function fakeRoot() {
  const root = await mkdtemp(join(tmpdir(), 'quire-scaffold-'))
  await mkdir(join(root, 'config'))
  await writeFile(
    join(root, 'config/plugins.ts'),
    "const plugins = {\n  enabled: ['books', 'tables'],\n}\nexport default plugins\n"
  )
  return root
}

test.group('make:plugin scaffold', (group) => {
  let root = ''
  group.each.setup(async () => {
    root = await fakeRoot()
    return () => rm(root, { recursive: true, force: true })
  })

  test('writes a manifest, an operation, a migration, a test and a README, and enables the plugin', async ({
    assert,
  }) => {
    const result = await scaffoldPlugin(root, 'polls', new Date(1_700_000_000_000))
    assert.equal(result.operation, 'getPollsStatus')
    for (const file of result.files) assert.isTrue(existsSync(join(root, file)), file)
    assert.include(
      await readFile(join(root, 'plugins/polls/plugin.ts'), 'utf8'),
      "getPollsStatus: () => import('./operations/get_polls_status.js')"
    )
    assert.isTrue(
      existsSync(
        join(root, 'plugins/polls/database/migrations/1700000000000_create_polls_items_table.ts')
      )
    )
    assert.include(
      await readFile(join(root, 'config/plugins.ts'), 'utf8'),
      "enabled: ['books', 'tables', 'polls']"
    )
  })

  test('refuses an invalid name or an existing folder', async ({ assert }) => {
    await assert.rejects(() => scaffoldPlugin(root, 'Bad-Name'), /Invalid plugin name/)
    await scaffoldPlugin(root, 'polls')
    await assert.rejects(() => scaffoldPlugin(root, 'polls'), /already exists/)
  })
})
