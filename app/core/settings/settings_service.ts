import db from '@adonisjs/lucid/services/db'
import type { Logger } from '@adonisjs/core/logger'
import { SYSTEM_ACTOR, type AuditActor, type AuditLog } from '#core/audit/audit_log'
import { SettingValueError, type SettingsRegistry } from './settings_registry.js'
import type { SettingsBus } from './settings_bus.js'
import type { RegisteredSetting, SettingSource, SettingState, SettingValue } from './types.js'

export const SETTINGS_TABLE = 'settings'

/** What a change did, old → new (a secret's values are left out). */
export interface SettingChange {
  key: string
  old: SettingValue
  new: SettingValue
  source: SettingSource
}

/**
 * The current value of every declared setting, with where it comes from:
 * the environment variable when set (fixed while the process runs), else an
 * override stored in the `settings` table (runtime settings only, changed from
 * the console), else the declared default. Reads are a Map lookup: a service
 * reads its setting on every use, so a change applies without a restart.
 * `update` is the one way to change a value; it writes the table, applies the
 * change here at once and, through the bus, on every other instance.
 */
export class SettingsService {
  private current = new Map<string, { value: SettingValue; source: SettingSource }>()
  private loaded = false

  constructor(
    readonly registry: SettingsRegistry,
    private bus: SettingsBus,
    private logger: Logger,
    private readEnv: (name: string) => unknown,
    private audit: AuditLog
  ) {
    this.apply(new Map())
  }

  /** Recomputes every value from the environment, the given overrides and the defaults. */
  private apply(overrides: Map<string, SettingValue>) {
    const next = new Map<string, { value: SettingValue; source: SettingSource }>()
    for (const setting of this.registry.all()) {
      const fromEnv = this.registry.fromEnv(setting, this.readEnv)
      if (fromEnv !== undefined) next.set(setting.fullKey, { value: fromEnv, source: 'env' })
      else if (setting.runtime && overrides.has(setting.fullKey))
        next.set(setting.fullKey, { value: overrides.get(setting.fullKey)!, source: 'database' })
      else next.set(setting.fullKey, { value: setting.default, source: 'default' })
    }
    this.current = next
  }

  /**
   * Reads the stored overrides. A stored value its declaration no longer
   * accepts (a bound changed) is ignored with a warning. Before the table
   * exists (a fresh database, migrations not run yet) nothing is stored.
   */
  async load() {
    let rows: { name: string; value_json: string }[]
    try {
      rows = await db.from(SETTINGS_TABLE).select('name', 'value_json')
    } catch (error) {
      this.logger.debug({ err: error }, 'settings: no stored overrides read (table missing?)')
      return false
    }
    const overrides = new Map<string, SettingValue>()
    for (const row of rows) {
      if (!this.registry.find(row.name)) continue
      try {
        overrides.set(row.name, await this.registry.validate(row.name, JSON.parse(row.value_json)))
      } catch {
        this.logger.warn({ setting: row.name }, 'settings: stored value refused, default used')
      }
    }
    this.apply(overrides)
    this.loaded = true
    return true
  }

  /** Loads the overrides (again if the first read failed) and listens for other instances' changes. */
  async start() {
    if (!this.loaded) await this.load()
    await this.bus.start(async () => {
      await this.load()
    })
  }

  async stop() {
    await this.bus.stop()
  }

  private state(key: string) {
    const state = this.current.get(key)
    if (!state) throw new Error(`Unknown setting ${key}: declare it in a manifest's settings`)
    return state
  }

  get(key: string): SettingValue {
    return this.state(key).value
  }

  boolean(key: string): boolean {
    return this.state(key).value as boolean
  }

  integer(key: string): number {
    return this.state(key).value as number
  }

  string(key: string): string {
    return this.state(key).value as string
  }

  /** Every setting with its value and source, in declaration order (kernel first). */
  list(): SettingState[] {
    return this.registry.all().map((setting) => ({ setting, ...this.state(setting.fullKey) }))
  }

  /** Whether the console may change it: a runtime setting its environment variable does not fix. */
  isEditable(setting: RegisteredSetting) {
    return setting.runtime && this.state(setting.fullKey).source !== 'env'
  }

  /**
   * Changes a runtime setting: `raw` is validated and converted (a form's
   * text is fine); null removes the override, back to the default. Refused
   * with a SettingValueError (a plain message) for an unknown key, a setting
   * that needs a restart, one fixed by its environment variable, or a value
   * its declaration does not accept. Applied here before answering, and on
   * every other instance through the bus. Recorded in the audit log
   * (`setting.changed`, old -> new; a secret's values never) in the write's
   * transaction.
   */
  async update(key: string, raw: unknown, by: AuditActor = SYSTEM_ACTOR): Promise<SettingChange> {
    const setting = this.registry.find(key)
    if (!setting) throw new SettingValueError(`No setting is called ${key}`)
    const before = this.state(key)
    if (before.source === 'env')
      throw new SettingValueError(
        `Set by the environment variable ${setting.env}: change it there and restart`
      )
    if (!setting.runtime)
      throw new SettingValueError('This setting applies at start only: it cannot change here')
    const value = raw === null ? null : await this.registry.validate(key, raw)
    const after = value === null ? setting.default : value
    await db.transaction(async (trx) => {
      if (value === null) {
        await trx.from(SETTINGS_TABLE).where('name', key).delete()
      } else {
        const row = {
          value_json: JSON.stringify(value),
          updated_by: by.userId,
          updated_at: new Date(),
        }
        const updated = await trx.from(SETTINGS_TABLE).where('name', key).update(row)
        const count = Array.isArray(updated) ? Number(updated[0]) : Number(updated)
        if (!count) await trx.table(SETTINGS_TABLE).insert({ name: key, ...row })
      }
      await this.audit.record(
        {
          actor: by,
          kind: 'setting.changed',
          target: { type: 'setting', id: key, label: setting.label },
          changes: {
            value: setting.secret ? { changed: true } : { from: before.value, to: after },
          },
        },
        trx
      )
    })
    await this.load()
    const change: SettingChange = {
      key,
      old: setting.secret ? '(secret)' : before.value,
      new: setting.secret ? '(secret)' : this.state(key).value,
      source: this.state(key).source,
    }
    this.logger.info({ setting: key, old: change.old, new: change.new }, 'setting changed')
    await this.bus.announce(key)
    return change
  }
}
