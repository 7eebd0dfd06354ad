import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'

/**
 * docs/operations.md states only what the code does: every variable it names is declared in
 * start/env.ts, and every `node ace` command it shows exists with the flags it uses.
 */

const OPERATIONS = app.makePath('docs/operations.md')

/** Names declared in start/env.ts's schema (`  NAME: Env.schema...`). */
async function declaredVariables() {
  const source = await readFile(app.makePath('start/env.ts'), 'utf8')
  return new Set([...source.matchAll(/^\s+([A-Z][A-Z0-9_]*):\s*Env\.schema/gm)].map((m) => m[1]))
}

/** Upper-case names with an underscore (`MEDIA_S3_BUCKET`), plus the two without one. */
export function variablesNamed(markdown: string): string[] {
  const found = new Set<string>()
  for (const match of markdown.matchAll(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b/g))
    found.add(match[0])
  for (const match of markdown.matchAll(/`(PORT|HOST)`/g)) found.add(match[1])
  return [...found]
}

/** `node ace NAME --flag` and `node build/ace.js NAME`, with the flags written after them. */
export function commandsShown(markdown: string) {
  const shown: { name: string; flags: string[] }[] = []
  for (const match of markdown.matchAll(
    /node (?:ace|build\/ace\.js)\s+([a-z][a-z:-]*)([^`\n]*)/g
  )) {
    const flags = [...match[2].matchAll(/(?:^|\s)--([a-z][a-z-]*)/g)].map((flag) => flag[1])
    shown.push({ name: match[1], flags })
  }
  return shown
}

test.group('Operator guide', () => {
  test('every variable it names is declared in start/env.ts', async ({ assert }) => {
    const markdown = await readFile(OPERATIONS, 'utf8')
    const declared = await declaredVariables()
    const named = variablesNamed(markdown)
    assert.isAtLeast(named.length, 30)
    assert.deepEqual(
      named.filter((name) => !declared.has(name)),
      [],
      'named in docs/operations.md but not declared in start/env.ts'
    )
    // The check itself: a misspelt name is caught.
    assert.notInclude([...declared], 'REDIS_HOSTNAME')
    assert.include(variablesNamed('set `REDIS_HOSTNAME` and `PORT`'), 'REDIS_HOSTNAME')
  })

  test('every ace command it shows exists, with the flags it uses', async ({ assert }) => {
    const markdown = await readFile(OPERATIONS, 'utf8')
    const shown = commandsShown(markdown)
    const names = new Set(shown.map((command) => command.name))
    for (const expected of ['queue:work', 'migration:run', 'quire:setup', 'outbox:send']) {
      assert.isTrue(names.has(expected), `the guide shows ${expected}`)
    }
    const { stdout } = await promisify(execFile)(process.execPath, ['ace', 'list', '--json'], {
      cwd: app.makePath(),
      maxBuffer: 16 * 1024 * 1024,
    })
    const commands = new Map<string, Set<string>>(
      JSON.parse(stdout).map((command: { commandName: string; flags: { flagName: string }[] }) => [
        command.commandName,
        new Set(command.flags.map((flag) => flag.flagName)),
      ])
    )
    const wrong: string[] = []
    for (const { name, flags } of shown) {
      const known = commands.get(name)
      if (!known) {
        wrong.push(`${name}: no such command`)
        continue
      }
      for (const flag of flags) if (!known.has(flag)) wrong.push(`${name}: no flag --${flag}`)
    }
    assert.deepEqual(wrong, [])
    assert.deepEqual(commandsShown('`node ace queue:work --concurrency=5 --nope`'), [
      { name: 'queue:work', flags: ['concurrency', 'nope'] },
    ])
  }).timeout(60_000)
})
