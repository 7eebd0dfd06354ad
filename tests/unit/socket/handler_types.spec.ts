import { test } from '@japa/runner'
import vine from '@vinejs/vine'
import {
  SocketHandler,
  SystemMessageHandler,
  type SocketHandlerClass,
  type SystemMessageHandlerClass,
} from '#core/socket/socket_handler'
import booksManifest from '#plugins/books/plugin'
import tablesManifest from '#plugins/tables/plugin'

/**
 * What the socket server takes is a handler class WITH a validator: the
 * `@ts-expect-error` lines below fail the type check (npm run typecheck) if a
 * class without `static validator` ever satisfies SocketHandlerClass or
 * SystemMessageHandlerClass.
 */
class WithoutValidator extends SocketHandler {
  static type = 99
  async handle() {}
}

class SystemWithoutValidator extends SystemMessageHandler {
  static msg = 'noValidator'
  async handle() {}
}

const validator = vine.compile(vine.object({ a: vine.string() }))

class WithValidator extends SocketHandler {
  static type = 98
  static validator = validator
  async handle() {}
}

test.group('socket handler types', () => {
  test('a handler class needs a static validator', ({ assert }) => {
    // @ts-expect-error no static validator
    const refused: SocketHandlerClass = WithoutValidator
    // @ts-expect-error no static validator
    const refusedSystem: SystemMessageHandlerClass = SystemWithoutValidator
    const accepted: SocketHandlerClass = WithValidator
    assert.isUndefined((refused as { validator?: unknown }).validator)
    assert.isUndefined((refusedSystem as { validator?: unknown }).validator)
    assert.strictEqual(accepted.validator, validator)
  })

  test("the plugins' socket and system-message entries are handler classes with validators", async ({
    assert,
  }) => {
    const handlers: SocketHandlerClass[] = []
    const systemHandlers: SystemMessageHandlerClass[] = []
    for (const manifest of [booksManifest, tablesManifest]) {
      for (const load of Object.values(manifest.socket ?? {})) {
        const { default: Handler } = await load()
        handlers.push(Handler)
      }
    }
    for (const load of Object.values(booksManifest.systemMessages)) {
      const { default: Handler } = await load()
      systemHandlers.push(Handler)
    }
    assert.isAbove(handlers.length, 0)
    assert.isAbove(systemHandlers.length, 0)
    for (const Handler of [...handlers, ...systemHandlers]) {
      assert.isFunction(Handler.validator.validate, Handler.name)
    }
  })
})
