import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { UserService } from '#core/services/user_service'
import { LoginService } from '#plugins/auth_service/services/login_service'
import { SessionService } from '#plugins/auth_service/services/session_service'
import { AuthError } from '#plugins/auth_service/errors'
import { SIGN_IN_CODE_PATTERN } from '#plugins/auth_service/services/recovery_code_service'
import { RECOVERY_CODES_FLASH, SESSION_KEYS, sessionIdOf, type PendingSignIn } from '#admin/sign_in'
import { consoleSettings } from '#admin/console_settings'
import { qrDataUrl } from '#admin/qr'

const passwordStep = vine.compile(
  vine.object({
    login: vine.string().trim().maxLength(255),
    password: vine.string().maxLength(255),
  })
)
const codeStep = vine.compile(
  vine.object({ code: vine.string().trim().regex(SIGN_IN_CODE_PATTERN) })
)

const REFUSED = 'Invalid login or password'

/**
 * The console's sign-in, over the auth service's login (plugins/auth_service
 * LoginService): the password goes through core's CredentialService (the
 * throttle counters createOauthkey and {auth_url}/login share), then the TOTP
 * code, or the enrolment when the policy requires it and none is set up. A
 * completed sign-in is an auth-service session (listed and revocable on the
 * Users page) and a session-guard login. Only administrators get through.
 */
@inject()
export default class SignInController {
  constructor(
    private logins: LoginService,
    private sessions: SessionService,
    private users: UserService
  ) {}

  private client(ctx: HttpContext) {
    return { ip: ctx.request.ip(), userAgent: ctx.request.header('user-agent') ?? null }
  }

  async show(ctx: HttpContext) {
    if (await ctx.auth.use('web').check()) {
      if (ctx.auth.use('web').user?.isAdmin && ctx.session.get(SESSION_KEYS.authSession))
        return ctx.response.redirect('/admin')
    }
    // Whoever sees the sign-in is signed out (signed out, expired, revoked): the browser drops
    // the key of the console pages kept in its history, so the back button shows none of them.
    ctx.inertia.clearHistory()
    const pending = ctx.session.get(SESSION_KEYS.pending) as PendingSignIn | undefined
    return ctx.inertia.render('login', {
      step: pending?.kind ?? 'password',
      login: pending?.login ?? null,
      setup:
        pending?.kind === 'setup'
          ? { secret: pending.secret, uri: pending.uri, qr: await qrDataUrl(pending.uri!) }
          : null,
      error: ctx.session.flashMessages.get('error') ?? null,
    })
  }

  async password(ctx: HttpContext) {
    ctx.session.forget(SESSION_KEYS.pending)
    const input = await passwordStep
      .validate(ctx.request.only(['login', 'password']))
      .catch(() => null)
    if (!input) return this.refuse(ctx, REFUSED)
    let result: Record<string, any>
    try {
      result = await this.logins.passwordLogin(input, this.client(ctx), {
        // In production the console requires TOTP of administrators (ADMIN_TOTP_REQUIRED).
        requireTotp: (user) => user.isAdmin && consoleSettings.adminTotpRequired,
      })
    } catch (error) {
      return this.refuse(ctx, error instanceof AuthError ? this.wording(error) : REFUSED, error)
    }
    const user = await this.users.findByLogin(input.login)
    if (!user?.isAdmin) {
      // A right password of a non-administrator: no console, and no session left behind.
      if (typeof result.refresh_token === 'string')
        await this.sessions.revokeByRefreshToken(result.refresh_token).catch(() => {})
      return this.refuse(ctx, 'This account may not use the console')
    }
    if (result.twoFactorRequired) {
      this.pend(ctx, { kind: 'totp', token: result.login_token, login: input.login })
    } else if (result.twoFactorSetupRequired) {
      this.pend(ctx, {
        kind: 'setup',
        token: result.setup_token,
        login: input.login,
        secret: result.twoFactorData.secret,
        uri: result.twoFactorData.qr_uri,
      })
    } else {
      return this.complete(ctx, result)
    }
    return ctx.response.redirect('/admin/login')
  }

  async code(ctx: HttpContext) {
    const pending = ctx.session.get(SESSION_KEYS.pending) as PendingSignIn | undefined
    if (!pending) return ctx.response.redirect('/admin/login')
    const input = await codeStep.validate(ctx.request.only(['code'])).catch(() => null)
    if (!input)
      return this.refuse(
        ctx,
        'Enter the 6-digit code of your authenticator, or a recovery code',
        null,
        false
      )
    try {
      const result =
        pending.kind === 'setup'
          ? await this.logins.confirmSetup(
              { setup_token: pending.token, code: input.code },
              this.client(ctx)
            )
          : await this.logins.confirmTotpLogin(
              { login_token: pending.token, code: input.code },
              this.client(ctx)
            )
      return this.complete(ctx, result)
    } catch (error) {
      const burnt =
        error instanceof AuthError &&
        ['invalid_setup_token', 'setup_token_expired', 'user_not_found'].includes(error.code)
      return this.refuse(
        ctx,
        error instanceof AuthError ? this.wording(error) : REFUSED,
        error,
        !burnt
      )
    }
  }

  async signOut(ctx: HttpContext) {
    const refreshToken = ctx.session.get(SESSION_KEYS.refreshToken) as string | undefined
    if (refreshToken) await this.sessions.revokeByRefreshToken(refreshToken).catch(() => {})
    await ctx.auth.use('web').logout()
    ctx.session.clear()
    return ctx.response.redirect('/admin/login')
  }

  /** A completed sign-in; after an enrolment, the Account page shows the new recovery codes once. */
  private async complete(ctx: HttpContext, result: Record<string, any>) {
    const user = await this.users.findByCode(result.user.code)
    if (!user?.isAdmin) {
      await this.sessions.revokeByRefreshToken(result.refresh_token).catch(() => {})
      return this.refuse(ctx, 'This account may not use the console')
    }
    ctx.session.forget(SESSION_KEYS.pending)
    ctx.session.regenerate()
    await ctx.auth.use('web').login(user)
    ctx.session.put(SESSION_KEYS.authSession, sessionIdOf(result.jwt))
    ctx.session.put(SESSION_KEYS.refreshToken, result.refresh_token)
    if (Array.isArray(result.recoveryCodes)) {
      ctx.session.flash(RECOVERY_CODES_FLASH, result.recoveryCodes)
      return ctx.response.redirect('/admin/account')
    }
    return ctx.response.redirect('/admin')
  }

  private pend(ctx: HttpContext, pending: PendingSignIn) {
    ctx.session.put(SESSION_KEYS.pending, pending)
  }

  private wording(error: AuthError) {
    switch (error.code) {
      case 'too_many_requests':
        return error.message
      case 'invalid_code':
        return 'The code is wrong or was already used'
      case 'invalid_setup_token':
      case 'setup_token_expired':
        return 'This sign-in has expired: start again'
      default:
        return REFUSED
    }
  }

  private refuse(ctx: HttpContext, message: string, error?: unknown, keepPending = false) {
    if (error && !(error instanceof AuthError)) throw error
    if (!keepPending) ctx.session.forget(SESSION_KEYS.pending)
    ctx.session.flash('error', message)
    return ctx.response.redirect('/admin/login')
  }
}
