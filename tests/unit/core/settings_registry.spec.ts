import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import logger from '@adonisjs/core/services/logger'
import {
  SettingDeclarationError,
  SettingsRegistry,
  SettingValueError,
} from '#core/settings/settings_registry'
import { SettingsService } from '#core/settings/settings_service'
import { LocalSettingsBus } from '#core/settings/settings_bus'
import { AuditLog } from '#core/audit/audit_log'
import type { SettingDeclaration } from '#core/settings/types'

const DECLARED: SettingDeclaration[] = [
  {
    key: 'limit',
    label: 'Limit',
    help: 'Requests per minute.',
    type: 'integer',
    default: 30,
    min: 1,
    max: 1000,
    env: 'TEST_LIMIT',
    runtime: true,
  },
  {
    key: 'enabled',
    label: 'Enabled',
    help: 'On or off.',
    type: 'boolean',
    default: false,
    env: 'TEST_ENABLED',
    runtime: true,
  },
  {
    key: 'mode',
    label: 'Mode',
    help: 'One of two.',
    type: 'enum',
    default: 'fast',
    choices: ['fast', 'safe'],
    env: 'TEST_MODE',
    runtime: false,
  },
]

const registry = () => new SettingsRegistry().declare('demo', DECLARED)

async function refusal(action: Promise<unknown>) {
  try {
    await action
  } catch (error) {
    if (error instanceof SettingValueError) return error.message
    throw error
  }
  return null
}

test.group('settings registry', () => {
  test('full keys are <owner>.<key>, in declaration order', ({ assert }) => {
    const keys = registry()
      .all()
      .map((setting) => setting.fullKey)
    assert.deepEqual(keys, ['demo.limit', 'demo.enabled', 'demo.mode'])
  })

  test('a bad declaration stops the boot, naming the setting', ({ assert }) => {
    const base = DECLARED[0]
    const declare = (declaration: Partial<SettingDeclaration>) => () =>
      new SettingsRegistry().declare('demo', [{ ...base, ...declaration } as SettingDeclaration])
    assert.throws(declare({ default: 0 }), /demo.limit.*below its min/)
    assert.throws(declare({ default: 2.5 }), /must be an integer/)
    assert.throws(declare({ key: 'Bad-Key' }), /camelCase/)
    assert.throws(declare({ env: 'lower' }), /UPPER_CASE/)
    assert.throws(
      () => new SettingsRegistry().declare('demo', [base]).declare('demo', [base]),
      SettingDeclarationError
    )
    assert.throws(
      () => new SettingsRegistry().declare('a', [base]).declare('b', [base]),
      /both read TEST_LIMIT/
    )
  })

  test('values are validated and converted with VineJS, refused in plain words', async ({
    assert,
  }) => {
    const settings = registry()
    assert.strictEqual(await settings.validate('demo.limit', '42'), 42)
    assert.strictEqual(await settings.validate('demo.enabled', 'true'), true)
    assert.strictEqual(await settings.validate('demo.enabled', false), false)
    assert.strictEqual(await settings.validate('demo.mode', 'safe'), 'safe')
    assert.equal(await refusal(settings.validate('demo.limit', '0')), 'Enter 1 or more')
    assert.equal(await refusal(settings.validate('demo.limit', '1001')), 'Enter 1000 or less')
    assert.equal(await refusal(settings.validate('demo.limit', 'many')), 'Enter a whole number')
    assert.equal(await refusal(settings.validate('demo.limit', '')), 'Enter a value')
    assert.equal(await refusal(settings.validate('demo.enabled', 'maybe')), 'Choose on or off')
    assert.equal(await refusal(settings.validate('demo.mode', 'slow')), 'Choose one of: fast, safe')
    assert.equal(
      await refusal(settings.validate('demo.nothing', '1')),
      'No setting is called demo.nothing'
    )
  })

  test('sources: the environment wins, else the default; an env-fixed or start-only setting cannot change', async ({
    assert,
  }) => {
    const env: Record<string, string> = { TEST_LIMIT: '75', TEST_ENABLED: '' }
    const service = new SettingsService(
      registry(),
      new LocalSettingsBus(),
      logger,
      (name) => env[name],
      await app.container.make(AuditLog)
    )
    const sources = Object.fromEntries(
      service.list().map((state) => [state.setting.fullKey, [state.value, state.source]])
    )
    assert.deepEqual(sources, {
      'demo.limit': [75, 'env'],
      'demo.enabled': [false, 'default'],
      'demo.mode': ['fast', 'default'],
    })
    assert.strictEqual(service.integer('demo.limit'), 75)
    assert.isFalse(service.isEditable(service.registry.find('demo.limit')!))
    assert.isTrue(service.isEditable(service.registry.find('demo.enabled')!))
    assert.isFalse(service.isEditable(service.registry.find('demo.mode')!))
    assert.match(
      (await refusal(service.update('demo.limit', 10))) ?? '',
      /^Set by the environment variable TEST_LIMIT/
    )
    assert.match((await refusal(service.update('demo.mode', 'safe'))) ?? '', /at start only/)
    assert.throws(() => service.get('demo.unknown'), /Unknown setting demo.unknown/)
  })

  test('the environment keeps its meaning: booleans and integers as start/env.ts reads them', ({
    assert,
  }) => {
    const settings = registry()
    const limit = settings.find('demo.limit')!
    const enabled = settings.find('demo.enabled')!
    assert.strictEqual(
      settings.fromEnv(limit, () => 5000),
      5000
    )
    assert.strictEqual(
      settings.fromEnv(limit, () => ' 12 '),
      12
    )
    assert.strictEqual(
      settings.fromEnv(enabled, () => 'true'),
      true
    )
    assert.strictEqual(
      settings.fromEnv(enabled, () => 'false'),
      false
    )
    assert.strictEqual(
      settings.fromEnv(enabled, () => true),
      true
    )
    assert.isUndefined(settings.fromEnv(enabled, () => undefined))
  })
})
