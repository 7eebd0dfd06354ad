import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { LoginService } from '../services/login_service.js'
import { SessionService } from '../services/session_service.js'
import { AuthorizationService } from '../services/authorization_service.js'
import {
  authorizeValidator,
  changePasswordValidator,
  confirmSetupValidator,
  confirmTotpValidator,
  loginValidator,
  logoutValidator,
  refreshValidator,
} from '../validators/auth_validators.js'
import { authError } from '../errors.js'
import { respond } from './responses.js'

const clientOf = (ctx: HttpContext) => ({
  ip: ctx.request.ip(),
  userAgent: ctx.request.header('user-agent') ?? null,
})

/** Query and body, body winning: OIDC parameters arrive either way. */
const paramsOf = (ctx: HttpContext) => ({ ...ctx.request.qs(), ...ctx.request.body() })

/**
 * Login and token endpoints of the auth service. Thin: validation here,
 * everything else in LoginService / SessionService / AuthorizationService.
 */
@inject()
export default class AuthController {
  constructor(
    private logins: LoginService,
    private sessions: SessionService,
    private authorizations: AuthorizationService
  ) {}

  /** `POST {auth_url}/login`: password (+ TOTP code) login, optionally for an authorization request. */
  login(ctx: HttpContext) {
    return respond(ctx, async () => {
      const input = await loginValidator.validate(ctx.request.body())
      const login = input.login ?? input.email ?? input.username ?? ''
      return this.logins.passwordLogin({ ...input, login }, clientOf(ctx))
    })
  }

  /** `POST {auth_url}/login/2fa/setup/confirm` (4.B.2). */
  confirmSetup(ctx: HttpContext) {
    return respond(ctx, async () => {
      const input = await confirmSetupValidator.validate(ctx.request.body())
      return this.logins.confirmSetup(input, clientOf(ctx))
    })
  }

  /** `POST {auth_url}/login/2fa`: the TOTP code of an enrolled user after a login answered twoFactorRequired. */
  confirmTotp(ctx: HttpContext) {
    return respond(ctx, async () => {
      const input = await confirmTotpValidator.validate(ctx.request.body())
      return this.logins.confirmTotpLogin(input, clientOf(ctx))
    })
  }

  /** `POST {auth_url}/token/refresh`: one-use refresh token -> new access and refresh tokens. */
  refresh(ctx: HttpContext) {
    return respond(ctx, async () => {
      const input = await refreshValidator.validate(ctx.request.body())
      const tokens = await this.sessions.refresh(input.refresh_token)
      return {
        success: true,
        jwt: tokens.jwt,
        refresh_token: tokens.refresh_token,
        token_type: 'Bearer',
        expires_in: tokens.expires_in,
      }
    })
  }

  /** `POST {auth_url}/logout`: ends the session of the bearer token, or of the refresh token in the body. */
  logout(ctx: HttpContext) {
    return respond(ctx, async () => {
      const header = ctx.request.header('authorization')
      if (header) {
        const identity = await this.sessions.authenticate(header)
        await this.sessions.revoke(identity)
      } else {
        const input = await logoutValidator.validate(ctx.request.body())
        if (!input.refresh_token) {
          throw authError(
            'unauthorized',
            'Send Authorization: Bearer <access token> or a refresh_token'
          )
        }
        await this.sessions.revokeByRefreshToken(input.refresh_token)
      }
      return { success: true, message: 'Signed out' }
    })
  }

  /** `POST {auth_url}/password/change`: the change announced by mustChangePassword, with its passwordResetToken. */
  changePassword(ctx: HttpContext) {
    return respond(ctx, async () => {
      const input = await changePasswordValidator.validate(ctx.request.body())
      return this.logins.changePassword(input)
    })
  }

  /**
   * `GET|POST {auth_url}/authorize`: registers an OIDC-style authorization
   * request. The login UI then posts `{auth_url}/login` with its request_id.
   */
  authorize(ctx: HttpContext) {
    return respond(ctx, async () => {
      const params = paramsOf(ctx)
      await authorizeValidator.validate(params)
      const started = await this.authorizations.start(params)
      return {
        success: true,
        request_id: started.requestId,
        expires_in: started.expiresIn,
        client: { client_id: started.client.clientId, name: started.client.name },
        passThroughParameters: started.passThrough,
      }
    })
  }
}
