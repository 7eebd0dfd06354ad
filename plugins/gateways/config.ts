import env from '#start/env'
import settings from '#core/settings/main'
import type { CountryCode } from 'libphonenumber-js'

/** Settings of the gateways plugin (env variables listed in README.md). */
const gatewaysConfig = {
  /**
   * Region of phone numbers written without their country code (ISO 3166
   * alpha-2, e.g. FR): `0612345678` is then +33612345678. Unset, only
   * international numbers (+33..., 0033...) are understood.
   */
  defaultRegion: (env.get('GATEWAYS_DEFAULT_REGION')?.trim().toUpperCase() || undefined) as
    CountryCode | undefined,
  /** Requests one gateway may make per window (registrations and messages alike). */
  ratePerGateway: env.get('GATEWAYS_RATE_PER_GATEWAY', 120),
  /** Messages one sender may send through gateways per window (all gateways together). */
  ratePerSender: env.get('GATEWAYS_RATE_PER_SENDER', 30),
  /** The window of both limits: a duration ('1 minute', '30s') or seconds. */
  rateWindow: env.get('GATEWAYS_RATE_WINDOW', '1 minute'),
  /**
   * The private token the SMS Gateway for Android app is configured with
   * (private-server mode): its device registration must carry it. Unset,
   * no phone may register through the app's device API.
   */
  androidPrivateToken: env.get('GATEWAYS_ANDROID_PRIVATE_TOKEN')?.trim() || undefined,
  /** How long a gateway has to confirm an SMS it collected before it goes back to the queue (ms). */
  smsAckTimeoutMs: env.get('GATEWAYS_SMS_ACK_TIMEOUT_MS', 600_000),
  /** Hand-outs of one SMS in all (first included); unconfirmed after the last, it is failed. */
  get smsMaxAttempts() {
    return settings.integer('gateways.smsMaxAttempts')
  },
  /** Push through FCM HTTP v1 (gcm_rid, gcm_nk devices); off while no service account is set. */
  fcm: {
    /** The service account's JSON key: the JSON itself, or the path of its file. */
    serviceAccount: env.get('GATEWAYS_FCM_SERVICE_ACCOUNT')?.trim() || undefined,
    /** The Firebase project; default the service account's project_id. */
    projectId: env.get('GATEWAYS_FCM_PROJECT_ID')?.trim() || undefined,
    /** Where `/v1/projects/<id>/messages:send` lives (tests: a local fake). */
    baseUrl: env.get('GATEWAYS_FCM_BASE_URL', 'https://fcm.googleapis.com'),
    /** The OAuth token endpoint; default the service account's token_uri. */
    tokenUrl: env.get('GATEWAYS_FCM_TOKEN_URL')?.trim() || undefined,
  },
  /** Push through APNs with a provider token (ios_dt, ios_dt_v2 devices); off while no key is set. */
  apns: {
    /** The .p8 signing key: its PEM text, or the path of its file. */
    key: env.get('GATEWAYS_APNS_KEY')?.trim() || undefined,
    keyId: env.get('GATEWAYS_APNS_KEY_ID')?.trim() || undefined,
    teamId: env.get('GATEWAYS_APNS_TEAM_ID')?.trim() || undefined,
    /** The app's bundle id (the apns-topic header). */
    topic: env.get('GATEWAYS_APNS_TOPIC')?.trim() || undefined,
    /** https://api.push.apple.com, the sandbox's, or (tests) a local h2c fake at http://127.0.0.1:port. */
    baseUrl: env.get('GATEWAYS_APNS_BASE_URL', 'https://api.push.apple.com'),
  },
  /**
   * Web Push for browsers (web_push devices), off until the VAPID key pair
   * and subject are set. Endpoints come from browsers: only the push
   * services' hosts below are posted to, over https.
   */
  webPush: {
    /** The VAPID key pair, base64url (`npx web-push generate-vapid-keys`); the public one is served. */
    publicKey: env.get('GATEWAYS_VAPID_PUBLIC_KEY')?.trim() || undefined,
    privateKey: env.get('GATEWAYS_VAPID_PRIVATE_KEY')?.trim() || undefined,
    /** A mailto: or https: contact the push services may use. */
    subject: env.get('GATEWAYS_VAPID_SUBJECT')?.trim() || undefined,
    /** Host names (and their subdomains) an endpoint may have: Chrome's, Firefox's, Edge's, Safari's. */
    endpointHosts: (
      env.get('GATEWAYS_WEBPUSH_ENDPOINT_HOSTS') ??
      'fcm.googleapis.com,push.services.mozilla.com,notify.windows.com,push.apple.com'
    )
      .split(',')
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    /** Plain http endpoints (tests' local push service only); production requires https. */
    allowHttp: env.get('GATEWAYS_WEBPUSH_ALLOW_HTTP', false),
    /** How long a push service keeps a notification for a browser that is offline (seconds). */
    ttlSeconds: 86_400,
  },
  /** Each provider request's time limit (ms). */
  pushTimeoutMs: env.get('GATEWAYS_PUSH_TIMEOUT_MS', 10_000),
  /** Characters of the message's text a notification carries (the rest is cut, with an ellipsis). */
  pushTextLength: 200,
  /** E-mail out (copies, invitations, reminders) over SMTP; off while no host is set. */
  smtp: {
    host: env.get('GATEWAYS_SMTP_HOST')?.trim() || undefined,
    port: env.get('GATEWAYS_SMTP_PORT', 587),
    /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
    secure: env.get('GATEWAYS_SMTP_SECURE', false),
    user: env.get('GATEWAYS_SMTP_USER')?.trim() || undefined,
    password: env.get('GATEWAYS_SMTP_PASSWORD') || undefined,
    /** The From of every mail Quire sends (`Quire <quire@example.org>`). */
    from: env.get('GATEWAYS_MAIL_FROM')?.trim() || undefined,
    /** Connection, greeting and each command's time limit (ms). */
    timeoutMs: env.get('GATEWAYS_SMTP_TIMEOUT_MS', 20_000),
    /**
     * SMTP connections kept open to the relay, each carrying mail after mail: a connection per
     * mail (connect, greeting, EHLO, and QUIT every time) made sending, not the relay, the limit.
     */
    connections: env.get('GATEWAYS_SMTP_CONNECTIONS', 5),
  },
  /** E-mail in: book addresses, the SMTP listener, the relay webhook (README.md, "E-mail in"). */
  mailIn: {
    /** The domain of book addresses `<b_c>.<b_o>@<domain>`; unset, books have no address. */
    domain: env.get('MAIL_DOMAIN')?.trim().toLowerCase() || undefined,
    /** The inbound SMTP listener's port; unset, no listener is started. */
    smtpPort: env.get('GATEWAYS_SMTP_LISTEN_PORT'),
    /** The address it listens on (0.0.0.0 to receive from other machines). */
    smtpHost: env.get('GATEWAYS_SMTP_LISTEN_HOST')?.trim() || '127.0.0.1',
    /** The bearer token of the relay webhook (POST /gateways/mail/inbound); unset, it answers 401. */
    inboundToken: env.get('GATEWAYS_MAIL_INBOUND_TOKEN')?.trim() || undefined,
    /** The largest raw message accepted (bytes, attachments included; advertised as SMTP SIZE). */
    maxBytes: env.get('GATEWAYS_MAIL_MAX_BYTES', 25 * 1024 * 1024),
    /** Messages one sender address may send per GATEWAYS_RATE_WINDOW. */
    ratePerSender: env.get('GATEWAYS_MAIL_RATE_PER_SENDER', 30),
  },
}

export default gatewaysConfig
