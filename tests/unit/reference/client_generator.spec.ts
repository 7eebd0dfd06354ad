import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import app from '@adonisjs/core/services/app'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { buildCatalogue, type Catalogue } from '#core/reference/catalogue'
import {
  GENERATED_CLIENT_FILE,
  formatClient,
  generateClient,
  tsType,
} from '#core/reference/client_generator'
import { QuireClient, OPERATIONS, SOCKET_FRAMES } from '#client/index'

const registry = await app.container.make(PluginRegistry)
let loaded: Catalogue | null = null
const catalogue = async () => (loaded ??= await buildCatalogue(registry))

test.group('Typed client: generated from the registry', () => {
  test('the committed resources/client/generated.ts is what the generator writes now', async ({
    assert,
  }) => {
    const expected = await formatClient(generateClient(await catalogue()))
    const committed = await readFile(app.makePath(GENERATED_CLIENT_FILE), 'utf8')
    // Not assert.equal on 5,000 lines: name the first line that differs.
    const want = expected.split('\n')
    const have = committed.split('\n')
    const line = want.findIndex((text, index) => text !== have[index])
    assert.isTrue(
      line === -1 && want.length === have.length,
      line === -1
        ? `${GENERATED_CLIENT_FILE} has ${have.length} lines, the generator ${want.length}: run npm run build:client`
        : `${GENERATED_CLIENT_FILE} is out of date at line ${line + 1}: "${have[line]}" instead of "${want[line]}": run npm run build:client`
    )
  })

  test('the generator notices a change of the registry (a renamed operation, a new parameter)', async ({
    assert,
  }) => {
    const found = await catalogue()
    const original = generateClient(found)
    const [first, ...rest] = found.operations
    const renamed = generateClient({
      ...found,
      operations: [{ ...first, name: 'zzRenamed' }, ...rest],
    })
    assert.notEqual(renamed, original)
    assert.include(renamed, 'zzRenamed(')
    const params = {
      ...first.params,
      properties: { ...first.params.properties, brandNew: { type: 'integer' } },
    }
    const widened = generateClient({ ...found, operations: [{ ...first, params }, ...rest] })
    assert.include(widened, 'brandNew?: number')
  })

  test('one method per registered operation, with its registry facts', async ({ assert }) => {
    const client = new QuireClient({ baseUrl: 'http://127.0.0.1:9' })
    const names = [...registry.operations.keys()].sort()
    assert.deepEqual(Object.keys(OPERATIONS).sort(), names)
    for (const name of names) {
      assert.isFunction((client as any)[name], name)
    }
    const found = await catalogue()
    for (const entry of found.operations) {
      const info = OPERATIONS[entry.name as keyof typeof OPERATIONS]
      assert.equal(info.auth, entry.Operation.auth, entry.name)
      assert.equal(info.writes, Boolean(entry.Operation.writes), entry.name)
      assert.deepEqual([...info.errors], entry.errors, entry.name)
    }
    assert.lengthOf(Object.keys(SOCKET_FRAMES), found.socket.length)
  })

  test('refuses an operation whose name the runtime uses', async ({ assert }) => {
    const found = await catalogue()
    const [first, ...rest] = found.operations
    assert.throws(
      () => generateClient({ ...found, operations: [{ ...first, name: 'login' }, ...rest] }),
      'Operation login cannot be a client method name'
    )
  })

  test('JSON Schema to TypeScript: enums, unions, nullable, arrays, records, nested objects', ({
    assert,
  }) => {
    assert.equal(tsType({ type: 'string', enum: ['a', 'b'] }), '"a" | "b"')
    assert.equal(tsType({ anyOf: [{ type: 'string' }, { type: 'number' }] }), 'string | number')
    assert.equal(tsType({ type: ['integer', 'null'] }), 'number | null')
    assert.equal(tsType({ type: 'array', items: { type: 'boolean' } }), 'Array<boolean>')
    assert.equal(
      tsType({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }),
      '[string, number]'
    )
    assert.equal(
      tsType({ type: 'object', additionalProperties: { type: 'string' } }),
      'Record<string, string>'
    )
    assert.equal(
      tsType({
        type: 'object',
        properties: { 'id': { type: 'integer', minimum: 1 }, 'a-b': { type: 'string' } },
        required: ['id'],
      }),
      '{\n  /** min 1 */\n  id: number\n  "a-b"?: string\n}'
    )
    assert.equal(tsType({}), 'unknown')
  })
})
