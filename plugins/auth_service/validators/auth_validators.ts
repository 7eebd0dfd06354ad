import vine, { SimpleMessagesProvider } from '@vinejs/vine'
import { SIGN_IN_CODE_PATTERN } from '../services/recovery_code_service.js'

/** Messages clients may show as they are. */
const MESSAGES = {
  'required': 'The {{ field }} field is required',
  'requiredIfMissing': 'The {{ field }} field is required',
  'string': 'The {{ field }} field must be a string',
  'code.regex': 'The code must be exactly 6 digits',
  'redirect_uri.url': 'The redirect_uri must be an absolute URL',
}
const messages = new SimpleMessagesProvider(MESSAGES)

/** JSON clients may send a code as a number; the rule is on its six digits. */
const sixDigits = () =>
  vine
    .string()
    .trim()
    .regex(/^\d{6}$/)
    .parse((value) => (typeof value === 'number' ? String(value) : value))

/** At sign-in (not at enrolment) a one-time recovery code may stand in for the TOTP code. */
const signInCode = () =>
  vine
    .string()
    .trim()
    .regex(SIGN_IN_CODE_PATTERN)
    .parse((value) => (typeof value === 'number' ? String(value) : value))

const signInMessages = new SimpleMessagesProvider({
  ...MESSAGES,
  'code.regex': 'The code must be 6 digits, or a recovery code (xxxxx-xxxxx)',
})

const token = () => vine.string().trim().minLength(1)

function compileWith(provider: SimpleMessagesProvider): typeof vine.compile {
  return (schema) => {
    const validator = vine.compile(schema)
    validator.messagesProvider = provider
    return validator
  }
}
const compile = compileWith(messages)

export const loginValidator = compileWith(signInMessages)(
  vine.object({
    /** A user code or an e-mail address (`email` and `username` are accepted as aliases). */
    login: vine.string().trim().minLength(1).optional().requiredIfMissing(['email', 'username']),
    email: vine.string().trim().minLength(1).optional(),
    username: vine.string().trim().minLength(1).optional(),
    password: vine.string().minLength(1),
    code: signInCode().optional(),
    request_id: token().optional(),
  })
)

export const confirmSetupValidator = compile(
  vine.object({ setup_token: token(), code: sixDigits() })
)

export const confirmTotpValidator = compileWith(signInMessages)(
  vine.object({ login_token: token(), code: signInCode() })
)

export const refreshValidator = compile(vine.object({ refresh_token: token() }))

export const logoutValidator = compile(vine.object({ refresh_token: token().optional() }))

export const changePasswordValidator = compile(
  vine.object({
    password_reset_token: token(),
    password: vine.string().minLength(1).maxLength(1024),
  })
)

export const authorizeValidator = compile(
  vine.object({
    client_id: vine.string().trim().minLength(1),
    redirect_uri: vine.string().trim().url({ require_tld: false, require_protocol: true }),
    state: vine.string().maxLength(2048).optional(),
    nonce: vine.string().maxLength(2048).optional(),
    response_mode: vine.enum(['query', 'form_post']).optional(),
  })
)
