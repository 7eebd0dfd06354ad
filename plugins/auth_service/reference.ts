import { defineReference } from '#core/reference/types'
import authConfig from './config.js'

const json = (schema: Record<string, unknown>, example?: Record<string, unknown>) => ({
  'application/json': { schema, ...(example ? { example } : {}) },
  'application/x-www-form-urlencoded': { schema },
})
const body = (
  properties: Record<string, unknown>,
  required: string[],
  example: Record<string, unknown>
) => ({
  required: true,
  content: json({ type: 'object', properties, required }, example),
})
const str = (description: string) => ({ type: 'string', description })
const error = {
  description:
    'an error body {success: false, error, message}; error is one of README "Errors (7.B)"',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/AuthError' } } },
}
const ok = (description: string, properties: Record<string, string>) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(properties).map(([k, v]) => [k, { description: v }])
        ),
      },
    },
  },
})
const completion = ok(
  'the login-completion body (4.B.2), or twoFactorRequired / twoFactorSetupRequired',
  {
    success: 'true',
    jwt: 'access token',
    refresh_token: 'refresh token',
    token_type: 'Bearer',
    expires_in: 'seconds',
    user: '{id, email, code}',
    mustChangePassword: 'true when a new password is due',
    twoFactorRequired: 'a TOTP code is needed: login_token',
    twoFactorSetupRequired: 'TOTP must be set up first: setup_token',
  }
)
const bearer = [{ bearer: [] }]
const tags = ['auth service']

/**
 * The authentication service (spec part B) under {auth_url} (AUTH_URL_PREFIX),
 * as the API reference shows it (docs/api-reference.md). Kept true to
 * README.md "Endpoints" and "Errors (7.B)".
 */
const p = authConfig.prefix
export default defineReference({
  paths: {
    [`${p}/login`]: {
      post: {
        tags,
        operationId: 'authLogin',
        summary: 'Sign in',
        description:
          'login (user code or e-mail; aliases email, username) and password; code for a second factor; request_id from /authorize.',
        requestBody: body(
          {
            login: str('user code or e-mail'),
            password: str('password'),
            code: str('TOTP or recovery code'),
            request_id: str('from /authorize'),
          },
          ['login', 'password'],
          { login: 'alice', password: 'secret-password' }
        ),
        responses: { '200': completion, '401': error, '422': error, '429': error },
      },
    },
    [`${p}/login/2fa`]: {
      post: {
        tags,
        operationId: 'authLogin2fa',
        summary: 'Second factor',
        requestBody: body(
          { login_token: str('from /login'), code: str('TOTP or recovery code') },
          ['login_token', 'code'],
          { login_token: 'LT', code: '123456' }
        ),
        responses: { '200': completion, '400': error, '401': error, '429': error },
      },
    },
    [`${p}/login/2fa/setup/confirm`]: {
      post: {
        tags,
        operationId: 'authTotpSetupConfirm',
        summary: 'Confirm the TOTP setup (4.B.2)',
        requestBody: body(
          { setup_token: str('from /login'), code: { type: 'string', pattern: '^\\d{6}$' } },
          ['setup_token', 'code'],
          { setup_token: 'ST', code: '123456' }
        ),
        responses: { '200': completion, '400': error, '401': error, '410': error },
      },
    },
    [`${p}/token/refresh`]: {
      post: {
        tags,
        operationId: 'authRefresh',
        summary: 'A new access token',
        requestBody: body({ refresh_token: str('the current refresh token') }, ['refresh_token'], {
          refresh_token: 'RT',
        }),
        responses: {
          '200': ok('new tokens', {
            success: 'true',
            jwt: 'access token',
            refresh_token: 'the new one',
            token_type: 'Bearer',
            expires_in: 'seconds',
          }),
          '401': error,
        },
      },
    },
    [`${p}/logout`]: {
      post: {
        tags,
        operationId: 'authLogout',
        summary: 'Sign out',
        description: 'Bearer, or refresh_token in the body.',
        security: [{ bearer: [] }, {}],
        requestBody: {
          content: json({
            type: 'object',
            properties: { refresh_token: str('instead of a bearer') },
          }),
        },
        responses: { '200': ok('signed out', { success: 'true', message: 'text' }), '401': error },
      },
    },
    [`${p}/password/change`]: {
      post: {
        tags,
        operationId: 'authPasswordChange',
        summary: 'Forced password change',
        requestBody: body(
          {
            password_reset_token: str('from the login-completion body'),
            password: str('the new password'),
          },
          ['password_reset_token', 'password'],
          { password_reset_token: 'PR', password: 'a-new-password' }
        ),
        responses: {
          '200': ok('changed', { success: 'true', message: 'text' }),
          '400': error,
          '422': error,
        },
      },
    },
    [`${p}/authorize`]: {
      get: {
        tags,
        operationId: 'authAuthorize',
        summary: 'OIDC-style bootstrap',
        description:
          'client_id, redirect_uri, optional state, nonce, response_mode (query or form_post); other parameters pass through. POST takes the same as a body.',
        parameters: ['client_id', 'redirect_uri', 'state', 'nonce', 'response_mode'].map(
          (name) => ({
            name,
            in: 'query',
            required: name === 'client_id' || name === 'redirect_uri',
            schema: { type: 'string' },
          })
        ),
        responses: {
          '200': ok('the authorization request', {
            success: 'true',
            request_id: 'for /login',
            expires_in: 'seconds',
            client: '{client_id, name}',
            passThroughParameters: 'the other parameters',
          }),
          '400': error,
        },
      },
    },
    [`${p}/api/sessions/revoke-others`]: {
      post: {
        tags,
        operationId: 'authRevokeOthers',
        summary: "Revoke the user's other sessions (4.B.1)",
        security: bearer,
        responses: {
          '200': ok('revoked', {
            success: 'true',
            message: 'text',
            revoked: 'count',
            details: '{auth_sessions, api_sessions, oauthkeys}',
          }),
          '401': error,
          '429': error,
        },
      },
    },
    [`${p}/api/sessions`]: {
      get: {
        tags,
        operationId: 'authSessions',
        summary: "The user's sign-in sessions",
        security: bearer,
        responses: {
          '200': ok('the sessions', {
            success: 'true',
            current: 'session id',
            sessions: '[{id, client_id, ip, user_agent, created_at, last_refreshed_at}]',
          }),
          '401': error,
        },
      },
    },
    [`${p}/api/me`]: {
      get: {
        tags,
        operationId: 'authMe',
        summary: 'The signed-in user',
        security: bearer,
        responses: {
          '200': ok('the user and session', {
            success: 'true',
            user: '{id, email, code}',
            session: '{id, expires_at}',
          }),
          '401': error,
        },
      },
    },
    [`${p}/api/ping`]: {
      get: {
        tags,
        operationId: 'authPing',
        summary: 'Liveness',
        responses: { '200': ok('alive', { success: 'true' }) },
      },
    },
  },
})
