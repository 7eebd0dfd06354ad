import type User from '#models/user'
import type { AuthorizationRequest } from '../services/authorization_service.js'
import type { IssuedTokens } from '../services/session_service.js'

export interface PasswordPolicies {
  minLength: number
  maxLength: number
  requireUppercase: boolean
  requireLowercase: boolean
  requireDigit: boolean
  requireSymbol: boolean
}

/** `user` of 4.B.2: the public uuid as `id`; `code` (u_c of the request API) is an addition. */
export function serializeAuthUser(user: Pick<User, 'code' | 'email'>, uuid: string) {
  return { id: uuid, email: user.email ?? '', code: user.code }
}

const escapeHtml = (value: string) =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')

/** What the client application receives at its redirect URI: the access token and the state it sent. */
function callbackParameters(jwt: string, request: AuthorizationRequest): [string, string][] {
  const pairs: [string, string][] = [['token', jwt]]
  if (request.state !== null) pairs.push(['state', request.state])
  return pairs
}

/** response_mode=query: the redirect URI with the token (and state) appended to its query. */
export function redirectWithToken(jwt: string, request: AuthorizationRequest): string {
  const url = new URL(request.redirectUri)
  for (const [name, value] of callbackParameters(jwt, request)) url.searchParams.append(name, value)
  return url.toString()
}

/** response_mode=form_post: an HTML page whose form posts the token to the redirect URI by itself. */
export function formPostHtml(jwt: string, request: AuthorizationRequest): string {
  const inputs = callbackParameters(jwt, request)
    .map(
      ([name, value]) =>
        `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`
    )
    .join('')
  return (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing in</title></head>' +
    '<body onload="document.forms[0].submit()">' +
    `<form method="post" action="${escapeHtml(request.redirectUri)}">${inputs}` +
    '<noscript><button type="submit">Continue</button></noscript></form></body></html>'
  )
}

/**
 * The login-completion body of 4.B.2. `redirect` is present when the login
 * began with an authorization request: with the token appended for
 * response_mode=query; for form_post it is the bare redirect URI (the form's
 * target) and `form_post` carries the page.
 */
export function serializeLoginSuccess(input: {
  tokens: IssuedTokens
  user: Pick<User, 'code' | 'email'>
  uuid: string
  request: AuthorizationRequest | null
  passwordResetToken: string | null
  policies: PasswordPolicies
}) {
  const { tokens, request } = input
  const body: Record<string, unknown> = {
    success: true,
    jwt: tokens.jwt,
    refresh_token: tokens.refresh_token,
    token_type: 'Bearer',
    expires_in: tokens.expires_in,
    user: serializeAuthUser(input.user, input.uuid),
    passThroughParameters: request?.passThrough ?? {},
    mustChangePassword: input.passwordResetToken !== null,
    authenticationPolicies: { password: input.policies },
    twoFactorSetupRequired: false,
  }
  if (input.passwordResetToken !== null) body.passwordResetToken = input.passwordResetToken
  if (request) {
    if (request.responseMode === 'form_post') {
      body.redirect = request.redirectUri
      body.form_post = formPostHtml(tokens.jwt, request)
    } else {
      body.redirect = redirectWithToken(tokens.jwt, request)
    }
  }
  return body
}
