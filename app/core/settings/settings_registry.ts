import vine, { SimpleMessagesProvider, errors as vineErrors } from '@vinejs/vine'
import type { RegisteredSetting, SettingDeclaration, SettingValue } from './types.js'

/** A declaration that cannot stand (a key declared twice, a default outside its own bounds). */
export class SettingDeclarationError extends Error {}

/** A value refused for a setting; `message` is for the person who typed it. */
export class SettingValueError extends Error {}

const KEY = /^[a-z][A-Za-z0-9]*$/

/** The VineJS schema of one setting's value (a form posts text: vine converts it). */
function schemaOf(setting: SettingDeclaration) {
  switch (setting.type) {
    case 'boolean':
      return vine.boolean()
    case 'integer': {
      let schema = vine.number().withoutDecimals()
      if (setting.min !== undefined) schema = schema.min(setting.min)
      if (setting.max !== undefined) schema = schema.max(setting.max)
      return schema
    }
    case 'string':
      return vine
        .string()
        .trim()
        .maxLength(setting.maxLength ?? 1000)
    case 'enum':
      return vine.enum(setting.choices as string[])
  }
}

/** Messages in plain words, naming the setting rather than the field. */
const messages = {
  boolean: 'Choose on or off',
  number: 'Enter a whole number',
  withoutDecimals: 'Enter a whole number',
  min: 'Enter {{ min }} or more',
  max: 'Enter {{ max }} or less',
  enum: 'Choose one of: {{ choices }}',
  required: 'Enter a value',
  maxLength: 'Enter at most {{ max }} characters',
}

/**
 * Every setting Quire knows: the kernel's (kernel_settings.ts) and those the
 * enabled plugins declare in their manifest's `settings`. Built once at boot;
 * it checks the declarations (a bad one stops the boot, naming it) and
 * validates values with VineJS.
 */
export class SettingsRegistry {
  private byKey = new Map<string, RegisteredSetting>()
  private validators = new Map<string, { validate(data: unknown): Promise<{ value: any }> }>()

  /** Adds an owner's declarations (`core` for the kernel, else a plugin id), in order. */
  declare(owner: string, declarations: readonly SettingDeclaration[]) {
    for (const declaration of declarations) {
      const fullKey = `${owner}.${declaration.key}`
      const problem = this.problemOf(declaration)
      if (problem) throw new SettingDeclarationError(`Setting "${fullKey}": ${problem}`)
      if (this.byKey.has(fullKey))
        throw new SettingDeclarationError(`Setting "${fullKey}" is declared twice`)
      const other = this.all().find((setting) => setting.env === declaration.env)
      if (other)
        throw new SettingDeclarationError(
          `Settings "${other.fullKey}" and "${fullKey}" both read ${declaration.env}`
        )
      this.byKey.set(fullKey, { ...declaration, owner, fullKey })
      const validator = vine.compile(vine.object({ value: schemaOf(declaration) }))
      validator.messagesProvider = new SimpleMessagesProvider(messages)
      this.validators.set(fullKey, validator as any)
    }
    return this
  }

  private problemOf(declaration: SettingDeclaration): string | null {
    if (!KEY.test(declaration.key)) return 'the key must be a camelCase word'
    if (!/^[A-Z][A-Z0-9_]*$/.test(declaration.env)) return 'env must be an UPPER_CASE name'
    switch (declaration.type) {
      case 'boolean':
        return typeof declaration.default === 'boolean' ? null : 'the default must be a boolean'
      case 'integer': {
        const { default: value, min, max } = declaration
        if (!Number.isInteger(value)) return 'the default must be an integer'
        if (min !== undefined && value < min) return 'the default is below its min'
        if (max !== undefined && value > max) return 'the default is above its max'
        return null
      }
      case 'string':
        return typeof declaration.default === 'string' ? null : 'the default must be a string'
      case 'enum':
        return declaration.choices.includes(declaration.default)
          ? null
          : 'the default is not one of its choices'
    }
  }

  all(): RegisteredSetting[] {
    return [...this.byKey.values()]
  }

  find(fullKey: string): RegisteredSetting | undefined {
    return this.byKey.get(fullKey)
  }

  /** The value a form or a caller sent, converted to the setting's type; refused with a plain message. */
  async validate(fullKey: string, raw: unknown): Promise<SettingValue> {
    const validator = this.validators.get(fullKey)
    if (!validator) throw new SettingValueError(`No setting is called ${fullKey}`)
    const setting = this.byKey.get(fullKey)!
    // A form's empty field (the body parser makes it null) is not 0 nor off.
    if ((raw === '' || raw === null || raw === undefined) && setting.type !== 'string')
      throw new SettingValueError('Enter a value')
    try {
      const { value } = await validator.validate({ value: raw })
      return value
    } catch (error) {
      if (!(error instanceof vineErrors.E_VALIDATION_ERROR)) throw error
      if (setting.type === 'enum')
        throw new SettingValueError(`Choose one of: ${setting.choices.join(', ')}`)
      const first = (error.messages as { message: string }[])[0]?.message ?? 'Invalid value'
      throw new SettingValueError(first)
    }
  }

  /**
   * A value read from the environment (the process's, as start/env.ts
   * validated it when it declares the variable), converted to the setting's
   * type; undefined when the variable is not set. The environment keeps its
   * meaning: its value is used as given, bounds are the console's only.
   */
  fromEnv(setting: RegisteredSetting, read: (name: string) => unknown): SettingValue | undefined {
    const raw = read(setting.env)
    if (raw === undefined || raw === null || raw === '') return undefined
    switch (setting.type) {
      case 'boolean':
        if (typeof raw === 'boolean') return raw
        return ['true', '1', 'on', 'yes'].includes(String(raw).trim().toLowerCase())
      case 'integer': {
        const value = typeof raw === 'number' ? raw : Number(String(raw).trim())
        return Number.isFinite(value) ? value : undefined
      }
      default:
        return String(raw)
    }
  }
}
