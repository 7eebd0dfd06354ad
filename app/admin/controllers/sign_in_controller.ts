import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import { UserService } from '#core/services/user_service'
import app from '@adonisjs/core/services/app'
import { ConsoleSecurity, ConsoleSecurityError, type SignedIn } from '#core/auth/console_security'
import { RECOVERY_CODES_FLASH, SESSION_KEYS, type PendingSignIn } from '#admin/sign_in'
import { consoleSettings } from '#admin/console_settings'
import { qrDataUrl } from '#admin/qr'

const passwordStep = vine.compile(
  vine.object({
    login: vine.string().trim().maxLength(255),
    password: vine.string().maxLength(255),
  })
)
// The provider's own pattern (a TOTP code or a recovery code), read once it is bound.
const provider = await app.container.make(ConsoleSecurity)
const codeStep = vine.compile(
  vine.object({ code: vine.string().trim().regex(provider.signInCodePattern) })
)

const REFUSED = 'Invalid login or password'

/**
 * The console's sign-in, through the kernel's ConsoleSecurity contract (the
 * auth_service plugin provides it): the password goes through core's
 * CredentialService (the throttle counters createOauthkey and {auth_url}/login
 * share), then the TOTP code, or the enrolment when the policy requires it and
 * none is set up. A completed sign-in is a session of the provider (listed and
 * revocable on the Users page) and a session-guard login. Only administrators
 * get through.
 */
@inject()
export default class SignInController {
  constructor(
    private security: ConsoleSecurity,
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
    let result
    try {
      result = await this.security.signInWithPassword(
        input,
        this.client(ctx),
        // In production the console requires TOTP of administrators (ADMIN_TOTP_REQUIRED).
        (user) => user.isAdmin && consoleSettings.adminTotpRequired
      )
    } catch (error) {
      return this.refuse(ctx, this.wording(error), error)
    }
    const user = await this.users.findByLogin(input.login)
    if (!user?.isAdmin) {
      // A right password of a non-administrator: no console, and no session left behind.
      if (result.step === 'done') await this.security.endSignIn(result.refreshToken)
      return this.refuse(ctx, 'This account may not use the console')
    }
    if (result.step === 'totp') {
      this.pend(ctx, { kind: 'totp', token: result.token, login: input.login })
    } else if (result.step === 'setup') {
      this.pend(ctx, {
        kind: 'setup',
        token: result.token,
        login: input.login,
        secret: result.secret,
        uri: result.uri,
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
      const result = await this.security.signInWithCode(
        { step: pending.kind, token: pending.token },
        input.code,
        this.client(ctx)
      )
      return this.complete(ctx, result)
    } catch (error) {
      const burnt = error instanceof ConsoleSecurityError && error.code === 'expired'
      return this.refuse(ctx, this.wording(error), error, !burnt)
    }
  }

  async signOut(ctx: HttpContext) {
    const refreshToken = ctx.session.get(SESSION_KEYS.refreshToken) as string | undefined
    if (refreshToken) await this.security.endSignIn(refreshToken)
    await ctx.auth.use('web').logout()
    ctx.session.clear()
    return ctx.response.redirect('/admin/login')
  }

  /** A completed sign-in; after an enrolment, the Account page shows the new recovery codes once. */
  private async complete(ctx: HttpContext, result: SignedIn) {
    const user = await this.users.findByCode(result.userCode)
    if (!user?.isAdmin) {
      await this.security.endSignIn(result.refreshToken)
      return this.refuse(ctx, 'This account may not use the console')
    }
    ctx.session.forget(SESSION_KEYS.pending)
    ctx.session.regenerate()
    await ctx.auth.use('web').login(user)
    ctx.session.put(SESSION_KEYS.authSession, result.sessionId)
    ctx.session.put(SESSION_KEYS.refreshToken, result.refreshToken)
    if (result.recoveryCodes) {
      ctx.session.flash(RECOVERY_CODES_FLASH, result.recoveryCodes)
      return ctx.response.redirect('/admin/account')
    }
    return ctx.response.redirect('/admin')
  }

  private pend(ctx: HttpContext, pending: PendingSignIn) {
    ctx.session.put(SESSION_KEYS.pending, pending)
  }

  /** What a refusal says; anything but the provider's refusals is not one (refuse rethrows it). */
  private wording(error: unknown) {
    if (!(error instanceof ConsoleSecurityError)) return REFUSED
    switch (error.code) {
      case 'throttled':
        return error.message
      case 'wrong_code':
        return 'The code is wrong or was already used'
      case 'expired':
        return 'This sign-in has expired: start again'
      default:
        return REFUSED
    }
  }

  private refuse(ctx: HttpContext, message: string, error?: unknown, keepPending = false) {
    if (error && !(error instanceof ConsoleSecurityError)) throw error
    if (!keepPending) ctx.session.forget(SESSION_KEYS.pending)
    ctx.session.flash('error', message)
    return ctx.response.redirect('/admin/login')
  }
}
