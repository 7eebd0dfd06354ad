import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import vine from '@vinejs/vine'
import { validate as validateOpenApi } from '@scalar/openapi-parser'
import { Parser as AsyncApiParser } from '@asyncapi/parser'
import quireConfig from '#config/quire'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { buildCatalogue, missingDocs, type Catalogue } from '#core/reference/catalogue'
import { buildOpenApi } from '#core/reference/openapi'
import { buildAsyncApi } from '#core/reference/asyncapi'
import { toJsonSchema } from '#core/reference/vine_json_schema'
import { validateWire, idList, looseText, stamp, text, flag } from '#core/rpc/wire'
import { ERROR_CATALOGUE } from '#core/rpc/errors'

const registry = await app.container.make(PluginRegistry)
const label = { prefix: '/live', apiVersion: quireConfig.apiVersion, createdVNB: 'live-test' }
let loaded: Catalogue | null = null
const catalogue = async () => (loaded ??= await buildCatalogue(registry))

test.group('API reference: coverage', () => {
  test('every registered operation and socket message has a summary, description, example and nok codes', async ({
    assert,
  }) => {
    const found = await catalogue()
    assert.deepEqual(missingDocs(found), [])
    assert.equal(found.operations.length, registry.operations.size)
    assert.equal(
      found.socket.length,
      registry.socketTypes.size + registry.systemMessages.size,
      'one entry per socket type and system message'
    )
  })

  test('fails on an operation without docs, an empty nok list, or a documented name not registered', async ({
    assert,
  }) => {
    const found = await catalogue()
    const [first, second, ...rest] = found.operations
    const broken: Catalogue = {
      ...found,
      operations: [
        { ...first, doc: undefined },
        { ...second, doc: { ...second.doc!, errors: [] } },
        ...rest,
      ],
      strays: ['books:op:noSuchOperation'],
    }
    const missing = missingDocs(broken)
    assert.include(missing, `operation ${first.name}: no entry in its plugin's reference`)
    assert.include(missing, `operation ${second.name}: no nok codes`)
    assert.include(missing, 'books:op:noSuchOperation: documented but not registered')
  })

  test("every operation's example passes its own validator", async ({ assert }) => {
    const { operations } = await catalogue()
    const refused: string[] = []
    for (const entry of operations) {
      if (!entry.Operation.validator) continue
      try {
        await validateWire(entry.Operation.validator, entry.doc!.example)
      } catch (error) {
        refused.push(`${entry.name}: ${(error as Error).message}`)
      }
    }
    assert.deepEqual(refused, [])
  })

  test("every socket message's example passes its handler's validator", async ({ assert }) => {
    const { socket } = await catalogue()
    const refused: string[] = []
    for (const entry of socket) {
      try {
        await validateWire(entry.validator, entry.doc!.example)
      } catch (error) {
        refused.push(`${entry.key}: ${(error as Error).message}`)
      }
    }
    assert.deepEqual(refused, [])
  })

  test('every documented nok code is in the catalogue of docs/errors.md', async ({ assert }) => {
    const { operations } = await catalogue()
    for (const entry of operations) {
      for (const code of entry.errors) assert.property(ERROR_CATALOGUE, code, entry.name)
    }
  })
})

test.group('API reference: VineJS to JSON Schema', () => {
  test('types, limits, enums, lists, records and required fields come from the validator', ({
    assert,
  }) => {
    const validator = vine.compile(
      vine.object({
        ids: idList().minLength(1).maxLength(500),
        state: vine.enum(['sent', 'failed'] as const),
        reason: looseText().trim().maxLength(255).optional(),
        count: stamp(),
        name: text().minLength(2),
        on: flag().optional(),
        rows: vine.record(vine.any()).optional(),
      })
    )
    const schema = toJsonSchema(validator)
    assert.deepEqual(schema.required, ['ids', 'state', 'count', 'name'])
    assert.deepInclude(schema.properties.ids, { type: 'array', minItems: 1, maxItems: 500 })
    assert.deepInclude(schema.properties.ids.items, { type: 'integer', minimum: 0 })
    assert.deepEqual(schema.properties.state, { enum: ['sent', 'failed'] })
    assert.deepEqual(schema.properties.reason, { type: 'string', maxLength: 255 })
    assert.deepInclude(schema.properties.name, { type: 'string', minLength: 2 })
    assert.equal(schema.properties.on.type, 'boolean')
    assert.equal(schema.properties.rows.type, 'object')
  })
})

test.group('API reference: documents', () => {
  test('the OpenAPI document is valid OpenAPI 3.1 with one path per operation', async ({
    assert,
  }) => {
    const found = await catalogue()
    const document = buildOpenApi(found, label)
    const result = await validateOpenApi(structuredClone(document))
    assert.isTrue(result.valid, JSON.stringify(result.errors?.slice(0, 5)))
    const paths = document.paths as Record<string, any>
    for (const entry of found.operations) {
      const operation = paths[`/live/api.php#${entry.name}`]?.post
      assert.exists(operation, entry.name)
      assert.equal(operation['x-quire-auth'], entry.Operation.auth)
      assert.isNotEmpty(operation['x-quire-errors'])
      assert.exists(
        operation.requestBody.content['application/x-www-form-urlencoded'].examples.call.value
      )
      if (entry.Operation.files) assert.exists(operation.requestBody.content['multipart/form-data'])
    }
    // Part B: the media URL family, the tus endpoint and the auth service.
    assert.exists(paths['/live/upload']?.post)
    assert.exists(paths['/live/dbi/ui/{size}/{userCode}/{stamp}']?.get)
    assert.isTrue(Object.keys(paths).some((path) => path.endsWith('/login')))
  })

  test('a broken document is refused by the validator (the check can fail)', async ({ assert }) => {
    const document: any = buildOpenApi(await catalogue(), label)
    document.paths['/live/api.php#getAllBooks'].post.responses = 'none'
    const result = await validateOpenApi(document)
    assert.isFalse(result.valid)
  })

  test('the AsyncAPI document is valid AsyncAPI 3 with every socket message', async ({
    assert,
  }) => {
    const found = await catalogue()
    const document = buildAsyncApi(found, label, '127.0.0.1:3333')
    const diagnostics = await new AsyncApiParser().validate(JSON.stringify(document))
    const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 0)
    assert.deepEqual(
      errors.map((e) => `${e.path.join('.')}: ${e.message}`),
      []
    )
    const messages = document.components.messages as Record<string, any>
    for (const entry of found.socket) {
      assert.exists(messages[entry.key], entry.key)
      assert.isNotEmpty(messages[entry.key].examples)
    }
    for (const key of ['attach', 'ping', 'ackMessage', 'bookUpdates', 'errorFrame']) {
      assert.exists(messages[key], key)
    }
    const broken: any = structuredClone(document)
    broken.operations.receive_attach.action = 'listen'
    const refused = await new AsyncApiParser().validate(JSON.stringify(broken))
    assert.isNotEmpty(refused.filter((diagnostic) => diagnostic.severity === 0))
  })
})
