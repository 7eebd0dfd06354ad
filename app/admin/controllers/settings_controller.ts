import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { SettingsService } from '#core/settings/settings_service'
import { SettingValueError } from '#core/settings/settings_registry'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import type { SettingState } from '#core/settings/types'
import { validatedBody } from '#admin/forms'
import { userActor } from '#core/audit/audit_log'

/** The form: a new value (text, as typed), or `reset` to go back to the default. */
const change = vine.compile(
  vine.object({
    value: vine.any().optional(),
    reset: vine.boolean().optional(),
  })
)

/** A group's title in plain words: `auth_service` -> "Auth service". */
function titleOf(owner: string) {
  if (owner === 'core') return 'Quire'
  const words = owner.replace(/_/g, ' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/**
 * The console's Settings page: every declared setting grouped by its owner
 * (the kernel, then each plugin), its current value and where it comes from.
 * Runtime settings not fixed by their environment variable are editable; a
 * change goes through SettingsService.update (validated, stored, applied on
 * every instance, audited).
 */
@inject()
export default class SettingsController {
  constructor(
    private settings: SettingsService,
    private registry: PluginRegistry
  ) {}

  private view(state: SettingState) {
    const { setting } = state
    return {
      key: setting.fullKey,
      label: setting.label,
      help: setting.help,
      type: setting.type,
      min: setting.type === 'integer' ? (setting.min ?? null) : null,
      max: setting.type === 'integer' ? (setting.max ?? null) : null,
      choices: setting.type === 'enum' ? [...setting.choices] : null,
      value: setting.secret ? null : state.value,
      defaultValue: setting.secret ? null : setting.default,
      source: state.source,
      env: setting.env,
      runtime: setting.runtime,
      editable: this.settings.isEditable(setting),
    }
  }

  async index({ inertia }: HttpContext) {
    const states = this.settings.list()
    // The kernel first (it registers itself as the plugin `core` too), then plugin order.
    const owners = new Set(['core', ...this.registry.plugins.map((plugin) => plugin.id)])
    const groups = [...owners]
      .map((owner) => ({
        owner,
        title: titleOf(owner),
        settings: states.filter((state) => state.setting.owner === owner).map((s) => this.view(s)),
      }))
      .filter((group) => group.settings.length > 0)
    return inertia.render('settings', { groups })
  }

  async update(ctx: HttpContext) {
    const key = String(ctx.params.key)
    const input = await validatedBody(ctx, change)
    if (!input) return ctx.response.redirect().back()
    const setting = this.settings.registry.find(key)
    if (!setting) return ctx.response.notFound('No such setting')
    const administrator = ctx.auth.use('web').user!
    try {
      const done = await this.settings.update(
        key,
        input.reset ? null : (input.value ?? ''),
        userActor(administrator, ctx.request.ip())
      )
      ctx.session.flash(
        'notice',
        input.reset
          ? `${setting.label}: back to its default`
          : `${setting.label}: saved (${String(done.new)})`
      )
    } catch (error) {
      if (!(error instanceof SettingValueError)) throw error
      ctx.session.flash('errorsBag', { [key]: error.message })
    }
    return ctx.response.redirect().back()
  }
}
