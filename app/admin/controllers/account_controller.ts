import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { AccessService } from '#core/services/access_service'
import { ConsoleSecurity, ConsoleSecurityError } from '#core/auth/console_security'
import { validatedBody } from '#admin/forms'
import { listQuery } from '#admin/list_query'
import { RECOVERY_CODES_FLASH, SESSION_KEYS } from '#admin/sign_in'
import { consoleSettings } from '#admin/console_settings'
import { qrDataUrl } from '#admin/qr'

const OAUTHKEYS_PER_PAGE = 20
/** The flash key of a new oauthkey, shown once. */
const NEW_OAUTHKEY_FLASH = 'newOauthkey'

interface Enrolment {
  token: string
  secret: string
  uri: string
}

const code = vine.compile(
  vine.object({
    code: vine
      .string()
      .trim()
      .regex(/^\d{6}$/),
  })
)
const apiPassword = vine.compile(vine.object({ disabled: vine.boolean() }))
const newOauthkey = vine.compile(
  vine.object({ application: vine.string().trim().minLength(1).maxLength(191) })
)

/**
 * GET /admin/account: the signed-in administrator's own security. TOTP
 * enrolment (a QR code made on the server), the one-time recovery codes
 * (shown once, regenerable), password sign-in on api.php (may be turned off
 * once TOTP is set up), and personal oauthkeys made here instead (shown once,
 * revocable). Every write is the administrator's own: no user id in the URL.
 */
@inject()
export default class AccountController {
  constructor(
    private access: AccessService,
    private security: ConsoleSecurity
  ) {}

  private me(ctx: HttpContext) {
    return ctx.auth.use('web').user!
  }

  async show(ctx: HttpContext) {
    const user = this.me(ctx)
    const state = await this.security.twoFactorOf(user)
    const enrolled = state.enrolled
    const pending = ctx.session.get(SESSION_KEYS.enrolment) as Enrolment | undefined
    return ctx.inertia.render('account', {
      twoFactor: {
        enrolled,
        required: consoleSettings.adminTotpRequired || state.required,
        recoveryCodesLeft: state.recoveryCodesLeft,
      },
      enrolment:
        pending && !enrolled
          ? { secret: pending.secret, uri: pending.uri, qr: await qrDataUrl(pending.uri) }
          : null,
      recoveryCodes: ctx.session.flashMessages.get(RECOVERY_CODES_FLASH) ?? null,
      apiPasswordDisabled: user.apiPasswordDisabled,
      oauthkeys: async () =>
        this.access.oauthkeysOf(
          user.id,
          await listQuery(ctx.request.qs(), OAUTHKEYS_PER_PAGE, 'oauthkeys')
        ),
      newOauthkey: ctx.session.flashMessages.get(NEW_OAUTHKEY_FLASH) ?? null,
    })
  }

  /** Starts an enrolment: a new secret, kept (sealed, as a pending setup) until its first code. */
  async startTotp(ctx: HttpContext) {
    try {
      const started = await this.security.startEnrolment(this.me(ctx))
      ctx.session.put(SESSION_KEYS.enrolment, started)
    } catch (error) {
      if (!(error instanceof ConsoleSecurityError)) throw error
      ctx.session.flash('errorsBag', { totp: error.message })
    }
    return ctx.response.redirect('/admin/account')
  }

  async confirmTotp(ctx: HttpContext) {
    const pending = ctx.session.get(SESSION_KEYS.enrolment) as Enrolment | undefined
    const input = await validatedBody(ctx, code)
    if (!pending || !input) return ctx.response.redirect('/admin/account')
    try {
      const codes = await this.security.confirmEnrolment(this.me(ctx), pending.token, input.code)
      ctx.session.forget(SESSION_KEYS.enrolment)
      ctx.session.flash(RECOVERY_CODES_FLASH, codes)
      ctx.session.flash('notice', 'Two-factor authentication is set up')
    } catch (error) {
      if (!(error instanceof ConsoleSecurityError)) throw error
      if (error.code !== 'wrong_code') ctx.session.forget(SESSION_KEYS.enrolment)
      ctx.session.flash('errorsBag', { code: error.message })
    }
    return ctx.response.redirect('/admin/account')
  }

  /** Ten new recovery codes (the old ones stop working), shown once. */
  async regenerateCodes(ctx: HttpContext) {
    const codes = await this.security.regenerateRecoveryCodes(this.me(ctx))
    if (!codes) {
      ctx.session.flash('errorsBag', { recovery: 'Set up two-factor authentication first' })
    } else {
      ctx.session.flash(RECOVERY_CODES_FLASH, codes)
      ctx.session.flash('notice', 'New recovery codes: the old ones no longer work')
    }
    return ctx.response.redirect('/admin/account')
  }

  /** Password sign-in on api.php: may be turned off only with TOTP set up (the console's way in). */
  async apiPassword(ctx: HttpContext) {
    const input = await validatedBody(ctx, apiPassword)
    if (!input) return ctx.response.redirect('/admin/account')
    if (!(await this.security.setApiPasswordDisabled(this.me(ctx), input.disabled))) {
      ctx.session.flash('errorsBag', {
        apiPassword: 'Set up two-factor authentication before turning off password sign-in',
      })
      return ctx.response.redirect('/admin/account')
    }
    ctx.session.flash(
      'notice',
      input.disabled ? 'Password sign-in on api.php is off' : 'Password sign-in on api.php is on'
    )
    return ctx.response.redirect('/admin/account')
  }

  /** A personal oauthkey for an application (by name), shown once. */
  async createOauthkey(ctx: HttpContext) {
    const input = await validatedBody(ctx, newOauthkey)
    if (!input) return ctx.response.redirect('/admin/account')
    const user = this.me(ctx)
    const { oauthkey, record, application } = await this.access.issueOauthkey(
      user,
      input.application
    )
    ctx.session.flash(NEW_OAUTHKEY_FLASH, {
      id: record.id,
      oauthkey,
      o_u: user.code,
      application: application.name,
    })
    return ctx.response.redirect('/admin/account')
  }

  async revokeOauthkey(ctx: HttpContext) {
    const id = Number(ctx.params.id)
    const revoked =
      Number.isSafeInteger(id) && (await this.access.revokeOauthkeyOf(this.me(ctx).id, id))
    ctx.session.flash('notice', revoked ? 'Application key revoked' : 'No such application key')
    return ctx.response.redirect('/admin/account')
  }
}
