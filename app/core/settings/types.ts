/** The value of a setting: what its type holds. */
export type SettingValue = boolean | number | string

/** Where a setting's current value comes from. */
export type SettingSource = 'env' | 'database' | 'default'

interface DeclarationBase {
  /** Unique within its owner (a plugin, or `core`); the full key is `<owner>.<key>`. */
  key: string
  /** A few plain words for the console ("Webhook timeout"). */
  label: string
  /** One or two sentences: what it changes, and its unit. */
  help: string
  /**
   * The environment variable that sets it. When set, the environment wins:
   * the value is fixed for the life of the process and the console shows it read-only.
   */
  env: string
  /** Whether it may change while Quire runs (the console edits it; every instance applies it). */
  runtime: boolean
  /** A secret's value is never shown, logged nor audited. */
  secret?: boolean
}

/**
 * A setting as a manifest (or the kernel) declares it: plain data, so the
 * registry checks declarations without loading any plugin code.
 */
export type SettingDeclaration = DeclarationBase &
  (
    | { type: 'boolean'; default: boolean }
    | { type: 'integer'; default: number; min?: number; max?: number }
    | { type: 'string'; default: string; maxLength?: number }
    | { type: 'enum'; default: string; choices: readonly string[] }
  )

/** A declaration with its owner and full key, as the registry holds it. */
export type RegisteredSetting = SettingDeclaration & {
  /** `core` or a plugin id. */
  owner: string
  /** `<owner>.<key>`: what services read and the console posts. */
  fullKey: string
}

/** A setting with its current value, as the console shows it. */
export interface SettingState {
  setting: RegisteredSetting
  value: SettingValue
  source: SettingSource
}
