import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { randomUUID } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, login, TEST_PASSWORD } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'
import { ensureSocketEndpoint } from '#tests/functional/socket/socket_client'
import { ERROR_CATALOGUE } from '#core/rpc/errors'
import { parseGuide, runGuide, missingLine, type Step } from './guide_runner.js'

const GUIDE = app.makePath('docs/getting-started.md')

/**
 * The guide's documented placeholders: the values of these `export NAME=...` lines (in its first
 * block) are replaced with the test's server and account; nothing else is changed.
 */
function substitute(steps: Step[], values: Record<string, string>): Step[] {
  return steps.map((step) => {
    let code = step.code
    for (const [name, value] of Object.entries(values)) {
      code = code.replace(new RegExp(`^export ${name}=.*$`, 'm'), `export ${name}='${value}'`)
    }
    return { ...step, code }
  })
}

/** What a reader's shell has: no Quire variables, no test settings. */
function readerEnv(): NodeJS.ProcessEnv {
  const { PATH, HOME, LANG, TMPDIR } = process.env
  return Object.fromEntries(
    Object.entries({ PATH, HOME, LANG, TMPDIR }).filter(([, value]) => value !== undefined)
  )
}

/** A working folder inside the checkout, so `import 'ws'` finds the project's node_modules. */
const workFolder = () => app.makePath('tmp', `guide-${randomUUID()}`)

test.group('Getting started guide', (group) => {
  const folders: string[] = []
  group.each.teardown(async () => {
    await Promise.all(
      folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true }))
    )
  })

  test('every sh and js block runs against the server and prints what the guide says', async ({
    assert,
  }) => {
    const markdown = await readFile(GUIDE, 'utf8')
    // Every error code the prose names is one of docs/errors.md.
    const codes = [...markdown.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1])
    assert.isAtLeast(codes.length, 5)
    assert.deepEqual(
      codes.filter((code) => !(code in ERROR_CATALOGUE)),
      [],
      'codes named in the guide but not in the catalogue'
    )
    const steps = parseGuide(markdown)
    const placeholders = steps[0].code
    for (const name of ['QUIRE_URL', 'QUIRE_LOGIN', 'QUIRE_PASSWORD']) {
      assert.match(placeholders, new RegExp(`^export ${name}=`, 'm'), `first block sets ${name}`)
    }
    // Each step of the guide, in both languages, with its output shown.
    const run = steps.filter((step) => !step.file)
    assert.isAtLeast(run.filter((step) => step.lang === 'sh').length, 5)
    assert.isAtLeast(run.filter((step) => step.lang === 'js').length, 5)
    assert.lengthOf(
      run.filter((step) => step.line !== steps[0].line && !step.expected),
      0,
      'every block after the first shows its output'
    )
    for (const operation of ['createSesskey', 'sendMsg', 'getTableValues', 'fileUpload']) {
      assert.isAtLeast(
        steps.filter((step) => step.code.includes(operation)).length,
        2,
        `${operation} in curl and JavaScript`
      )
    }

    await ensureSocketEndpoint()
    const user = await makeUser()
    const folder = workFolder()
    folders.push(folder)
    const values = {
      QUIRE_URL: serverUrl(),
      QUIRE_LOGIN: user.email!,
      QUIRE_PASSWORD: TEST_PASSWORD,
    }
    const results = await runGuide(substitute(steps, values), { cwd: folder, env: readerEnv() })
    assert.lengthOf(results, steps.length)

    // What the blocks did is on the server: the guide's book, message, row and upload.
    const session = await login(user)
    const messages = await rpc({
      req: 'getBookMessages',
      ...session,
      b_o: user.code,
      b_c: 'guide',
    })
    assert.equal(messages.body.status, 'ok', messages.text)
    const texts = messages.body.bookMessages.map((message: any) => message.msg)
    assert.includeMembers(texts, [
      'Hello from curl',
      'Hello from JavaScript',
      'Hello, socket',
      'Hello, stream',
      'A file follows',
    ])
  }).timeout(180_000)

  test('a block that fails or prints something else fails the run', async ({ assert }) => {
    const folder = workFolder()
    folders.push(folder)
    const guide = [
      '```sh',
      'export GREETING=hello',
      '```',
      '```js',
      'console.log(`${process.env.GREETING} from node`)',
      '```',
      '```text',
      '... from node',
      '```',
    ].join('\n')
    const steps = parseGuide(guide)
    const results = await runGuide(steps, { cwd: folder, env: readerEnv() })
    assert.equal(results[1].stdout.trim(), 'hello from node')

    const wrongOutput = parseGuide(guide.replace('... from node', 'hello from bash'))
    await assert.rejects(
      () => runGuide(wrongOutput, { cwd: folder, env: readerEnv() }),
      /did not print "hello from bash"/
    )
    const failing = parseGuide(guide.replace('export GREETING=hello', 'false'))
    await assert.rejects(() => runGuide(failing, { cwd: folder, env: readerEnv() }), /exited 1/)
    const unset = parseGuide(guide.replace('export GREETING=hello', 'echo "$NOT_SET"'))
    await assert.rejects(() => runGuide(unset, { cwd: folder, env: readerEnv() }), /exited 1/)
    // A background job the block leaves running is ended with it (the run does not wait for it).
    const leftOver = parseGuide('```sh\nsleep 600 &\necho started\n```\n```text\nstarted\n```')
    const [ended] = await runGuide(leftOver, { cwd: folder, env: readerEnv(), timeoutMs: 20_000 })
    assert.notInclude(ended.stderr, 'killed', 'ended when bash exited, not by the guard')
    assert.isUndefined(missingLine('a\nb 1\nc', ['a', 'b ...']))
    assert.equal(missingLine('b 1\na', ['a', 'b ...']), 'b ...')
  })
})
