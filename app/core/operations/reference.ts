import { defineReference } from '#core/reference/types'

/**
 * The kernel's operations (keys, sessions, users) as the API reference and the
 * MCP tools show them (docs/api-reference.md); parameters come from the
 * operations' validators. Spec part 4.A.1 and docs/spec/client-facts.md.
 */
export default defineReference({
  operations: {
    createAppkey: {
      summary: 'Create an application key',
      description:
        'Registers an application by name and answers its appkey, the first step of the key flow (appkey → oauthkey → sesskey).',
      returns: { appkey: 'the application key', id: 'its id' },
      example: { appname: 'My client' },
      errors: ['INVALID_PARAMETER'],
    },
    createOauthkey: {
      summary: 'Sign in: an oauthkey for a login and password',
      description:
        'Checks `login` (user code, e-mail or phone) and `pwd` for application `appkey` and answers an oauthkey; `createUserAccount` makes the account when the server allows it.',
      returns: { oauthkey: 'the long-lived key', id: 'its id', o_u: "the user's code" },
      example: { appkey: 'AK', login: 'alice', pwd: 'secret-password' },
      errors: [
        'INVALID_APPKEY',
        'INVALID_LOGIN',
        'TOO_MANY_ATTEMPTS',
        'ACCOUNT_CREATION_DISABLED',
        'PASSWORD_SIGN_IN_DISABLED',
      ],
    },
    createSesskey: {
      summary: 'Open a session from an oauthkey',
      description:
        'A sesskey for `o_u` and its `oauthkey`; `restrictions` (JSON) may make it read-only, keep it to one book or hide messages, tables or events.',
      returns: {
        sesskey: 'the session key',
        id: 'its id',
        appName: 'the application',
        restrictions: 'the restrictions applied',
      },
      example: { o_u: 'alice', oauthkey: 'OK', restrictions: { readonly: 1 } },
      errors: ['INVALID_OAUTHKEY', 'UNKNOWN_USER'],
    },
    dropAllSessions: {
      summary: 'Drop every other session',
      description:
        'Keeps the calling session; drops every other session and oauthkey of its user (their sockets are closed with 4001).',
      returns: {},
      example: {},
      errors: ['INVALID_SESSKEY'],
    },
    getOrCreateSessKey: {
      summary: 'Reuse or open a session',
      description:
        'Answers `sesskey` when it is still valid for `o_u`, otherwise a new one from `oauthkey`.',
      returns: { sesskey: 'a valid session key', u_c: "the user's code", sstamp: 'server stamp' },
      example: { o_u: 'alice', oauthkey: 'OK' },
      errors: ['INVALID_OAUTHKEY', 'UNKNOWN_USER'],
    },
    getUserInfo: {
      summary: "The user's profile, prefs and rights",
      description:
        '`userInfo` is answered when it changed after `sstamp` (or without sstamp); `sstamp` is always the current server stamp. Plugins add fields (nbBooks...).',
      returns: { sstamp: 'server stamp', userInfo: 'the user (2.3), when changed' },
      example: { sstamp: 0 },
      errors: ['UNKNOWN_USER'],
    },
  },
})
