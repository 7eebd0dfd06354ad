/*
|--------------------------------------------------------------------------
| Environment variables
|--------------------------------------------------------------------------
|
| Every variable Quire reads is declared and typed here, and listed in the
| README's configuration table. Nothing is required: `npm start` on a fresh
| clone works with no .env file at all.
*/
import { Env } from '@adonisjs/core/env'

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum.optional(['development', 'production', 'test'] as const),
  PORT: Env.schema.number.optional(),
  HOST: Env.schema.string.optional({ format: 'host' }),
  /**
   * Proxies whose X-Forwarded-* headers are believed (config/app.ts trustProxy): comma-separated
   * addresses, CIDR ranges, or loopback / linklocal / uniquelocal. Unset: none, loopback included.
   */
  TRUSTED_PROXIES: Env.schema.string.optional(),
  LOG_LEVEL: Env.schema.string.optional(),
  APP_KEY: Env.schema.string.optional(),

  /** Label and API level reported in every envelope as createdVNB: `<QUIRE_ENV>-<QUIRE_API_VERSION>`. */
  QUIRE_ENV: Env.schema.string.optional(),
  QUIRE_API_VERSION: Env.schema.string.optional(),
  /** Environment path prefixes api.php and the /live routes are served under: `live,dev`. */
  QUIRE_URL_PREFIXES: Env.schema.string.optional(),
  /** api.php served ahead of the router (README, "The per-request path"); false: the router's route. */
  QUIRE_API_FAST_PATH: Env.schema.boolean.optional(),
  /** Folder holding the embedded database and other local state; created when missing. */
  DATA_DIR: Env.schema.string.optional(),

  DB_CONNECTION: Env.schema.enum.optional(['sqlite', 'mysql'] as const),
  DB_HOST: Env.schema.string.optional({ format: 'host' }),
  DB_PORT: Env.schema.number.optional(),
  DB_USER: Env.schema.string.optional(),
  DB_PASSWORD: Env.schema.string.optional(),
  DB_DATABASE: Env.schema.string.optional(),
  SQLITE_FILE: Env.schema.string.optional(),

  /** Redis is used (limiter, queue, stamps, fan-out) only when REDIS_HOST is set. */
  REDIS_HOST: Env.schema.string.optional({ format: 'host' }),
  REDIS_PORT: Env.schema.number.optional(),
  REDIS_PASSWORD: Env.schema.string.optional(),
  REDIS_DB: Env.schema.number.optional(),
  REDIS_PREFIX: Env.schema.string.optional(),

  /** Session keys expire after this many seconds without use; 0 keeps them until dropped. */
  SESSION_IDLE_TTL: Env.schema.number.optional(),
  /**
   * Failed sign-ins allowed per login and per client address within LOGIN_WINDOW, counted
   * together for every sign-in endpoint (CredentialService: createOauthkey, {auth_url}/login).
   */
  LOGIN_MAX_ATTEMPTS: Env.schema.number.optional(),
  LOGIN_MAX_ATTEMPTS_PER_ADDRESS: Env.schema.number.optional(),
  LOGIN_WINDOW: Env.schema.string.optional(),
  /** The createUserAccount option of createOauthkey: off unless set to true. */
  QUIRE_CREATE_USER_ACCOUNT: Env.schema.boolean.optional(),

  /** Authentication service (plugins/auth_service/README.md): mount point and optional own port. */
  AUTH_URL_PREFIX: Env.schema.string.optional(),
  AUTH_PORT: Env.schema.number.optional(),
  AUTH_ISSUER: Env.schema.string.optional(),
  /** `kid:secret` pairs, comma-separated; the first signs, all verify (rotation). Default: derived from APP_KEY. */
  AUTH_JWT_KEYS: Env.schema.string.optional(),
  /** Lifetimes in seconds: access token, refresh token, setup/2FA login token, authorization request. */
  AUTH_ACCESS_TTL: Env.schema.number.optional(),
  AUTH_REFRESH_TTL: Env.schema.number.optional(),
  AUTH_SETUP_TTL: Env.schema.number.optional(),
  AUTH_REQUEST_TTL: Env.schema.number.optional(),
  /** Global TOTP policy: `optional` (default) or `required`; a per-user policy overrides it. */
  AUTH_TOTP_POLICY: Env.schema.enum.optional(['optional', 'required'] as const),
  AUTH_PASSWORD_MIN_LENGTH: Env.schema.number.optional(),
  /** The admin console requires TOTP of administrators: default true in production, false otherwise. */
  ADMIN_TOTP_REQUIRED: Env.schema.boolean.optional(),
  /** revoke-others rate limit: requests per user within the window. */
  AUTH_REVOKE_MAX_REQUESTS: Env.schema.number.optional(),
  AUTH_REVOKE_WINDOW: Env.schema.string.optional(),
  /** Bearer checks: `auto` caches session state in memory where revocation stays immediate, `off` reads the database. */
  AUTH_SESSION_CACHE: Env.schema.enum.optional(['auto', 'off'] as const),
  AUTH_SESSION_CACHE_TTL: Env.schema.number.optional(),

  /** Jobs: attempts and first backoff delay (ms) unless a job says otherwise. */
  QUEUE_ATTEMPTS: Env.schema.number.optional(),
  QUEUE_BACKOFF_MS: Env.schema.number.optional(),
  /** Run job workers inside the web process (default true; false when `node ace queue:work` runs them). */
  QUEUE_INLINE_WORKER: Env.schema.boolean.optional(),
  /** Jobs run at once per worker; ms before a dead worker's job runs again; idempotency key lifetime (s); shutdown grace (ms). */
  QUEUE_CONCURRENCY: Env.schema.number.optional(),
  QUEUE_LOCK_MS: Env.schema.number.optional(),
  QUEUE_IDEMPOTENCY_TTL: Env.schema.number.optional(),
  QUEUE_SHUTDOWN_TIMEOUT: Env.schema.number.optional(),

  /** Outbox (docs/outbox.md): attempts, backoff (ms), claim lease, sweep period and grace (ms), log retention (days). */
  OUTBOX_MAX_ATTEMPTS: Env.schema.number.optional(),
  OUTBOX_BACKOFF_MS: Env.schema.number.optional(),
  OUTBOX_BACKOFF_MAX_MS: Env.schema.number.optional(),
  OUTBOX_LEASE_MS: Env.schema.number.optional(),
  OUTBOX_SWEEP_MS: Env.schema.number.optional(),
  OUTBOX_SWEEP_GRACE_MS: Env.schema.number.optional(),
  OUTBOX_RETENTION_DAYS: Env.schema.number.optional(),
  /** Days the audit log keeps an entry (docs/audit.md); default 365. */
  AUDIT_RETENTION_DAYS: Env.schema.number.optional(),
  OUTBOX_SENDS: Env.schema.number.optional(),
  OUTBOX_SENDS_PER_RECIPIENT: Env.schema.number.optional(),
  OUTBOX_SENDER: Env.schema.enum.optional(['process', 'inline'] as const),
  OUTBOX_SENDER_NICE: Env.schema.number.optional(),
  /** How long (ms) a delivery may wait while writes saturate its process (docs/outbox.md, "Writes first"); 0: never held. */
  OUTBOX_SATURATED_DELAY_MS: Env.schema.number.optional(),

  /** Webhooks (plugins/webhooks/README.md): request timeout (ms), ranges allowed despite the address check, failed deliveries before a subscription is disabled. */
  WEBHOOKS_TIMEOUT_MS: Env.schema.number.optional(),
  WEBHOOKS_ALLOWED_RANGES: Env.schema.string.optional(),
  WEBHOOKS_DISABLE_AFTER_FAILURES: Env.schema.number.optional(),
  WEBHOOKS_API_DEFAULT_BYPASS: Env.schema.boolean.optional(),

  /** Realtime channel (docs/socket.md): WebSocket path, frame size and rate limits, heartbeat, auth re-check. */
  SOCKET_PATH: Env.schema.string.optional(),
  SOCKET_PORT: Env.schema.number.optional(),
  SOCKET_MAX_FRAME_BYTES: Env.schema.number.optional(),
  SOCKET_FRAMES_PER_SECOND: Env.schema.number.optional(),
  SOCKET_FRAME_BURST: Env.schema.number.optional(),
  SOCKET_MAX_BAD_FRAMES: Env.schema.number.optional(),
  SOCKET_HEARTBEAT_MS: Env.schema.number.optional(),
  SOCKET_AUTH_RECHECK_MS: Env.schema.number.optional(),
  SOCKET_ATTACH_TIMEOUT_MS: Env.schema.number.optional(),
  SOCKET_BOOK_UPDATES_DELAY_MS: Env.schema.number.optional(),
  /** Publish the socket's server-to-client messages on Transmit (SSE) channels too (default true). */
  TRANSMIT_ENABLED: Env.schema.boolean.optional(),

  /** Books (plugins/books/README.md): ms between a new message and the refresh of its book's counters. */
  BOOKS_COUNTER_REFRESH_MS: Env.schema.number.optional(),
  /** Most changed messages one getBookMessages sstamp delta answers (newest changes first). */
  BOOKS_MESSAGES_DELTA_MAX: Env.schema.number.optional(),
  /** Days an invitation to an address with no account (inviteMember) stays valid (default 14). */
  BOOKS_ADDRESS_INVITATION_TTL_DAYS: Env.schema.number.optional(),

  /** Media (plugins/media/README.md): storage disk (`fs` under DATA_DIR/media, or `s3`) and its S3 settings. */
  MEDIA_DISK: Env.schema.enum.optional(['fs', 's3'] as const),
  MEDIA_FS_ROOT: Env.schema.string.optional(),
  MEDIA_S3_BUCKET: Env.schema.string.optional(),
  MEDIA_S3_REGION: Env.schema.string.optional(),
  MEDIA_S3_ENDPOINT: Env.schema.string.optional(),
  MEDIA_S3_KEY: Env.schema.string.optional(),
  MEDIA_S3_SECRET: Env.schema.string.optional(),
  MEDIA_S3_PATH_STYLE: Env.schema.boolean.optional(),
  /** Largest upload (fileUpload and resumableUpload), in bytes; largest image in pixels (width x height). */
  MEDIA_MAX_UPLOAD_BYTES: Env.schema.number.optional(),
  MEDIA_MAX_PIXELS: Env.schema.number.optional(),
  /** Origin of the absolute URLs fileUpload answers (url, gallery, preview); default http://HOST:PORT. */
  MEDIA_PUBLIC_URL: Env.schema.string.optional(),
  /** Where unfinished resumable uploads wait (default DATA_DIR/tus). */
  MEDIA_TUS_DIR: Env.schema.string.optional(),
  /** Hours after which a resumable upload expires and is removed (default 24; 0: never). */
  MEDIA_TUS_EXPIRY_HOURS: Env.schema.number.optional(),
  /** Memory kept for small files served by the /dbi URLs (thumbnails), in MiB; 0 turns it off. */
  MEDIA_MEMORY_CACHE_MB: Env.schema.number.optional(),
  /** Image derivatives (sharp) made at once per process, past which /dbi answers 503; longest one, in seconds. */
  MEDIA_SHARP_CONCURRENCY: Env.schema.number.optional(),
  MEDIA_SHARP_TIMEOUT_SECONDS: Env.schema.number.optional(),
  /** How long an instance trusts a file row looked up by name, in seconds (default 5). */
  MEDIA_NAME_CACHE_SECONDS: Env.schema.number.optional(),

  /** Cell history (plugins/tables/README.md, "Cell history"): off with false; retention per table by count or age. */
  TABLES_HISTORY: Env.schema.boolean.optional(),
  TABLES_HISTORY_MAX_PER_TABLE: Env.schema.number.optional(),
  TABLES_HISTORY_DAYS: Env.schema.number.optional(),
  /** Whether new plain text fields get a text index (setting tables.textIndex; default true). */
  TABLES_TEXT_INDEX: Env.schema.boolean.optional(),
  /** Counts kept by triggers from this many rows (setting tables.countersMinRows; default 50,000; 0 off). */
  TABLES_COUNTERS_MIN_ROWS: Env.schema.number.optional(),

  /** Row and form tokens (plugins/tables/README.md): requests per token and per address per window. */
  TABLES_TOKEN_RATE_PER_TOKEN: Env.schema.number.optional(),
  TABLES_TOKEN_RATE_PER_ADDRESS: Env.schema.number.optional(),
  TABLES_TOKEN_RATE_WINDOW: Env.schema.string.optional(),

  /** SMS gateways (plugins/gateways/README.md): region of national numbers (ISO 3166, e.g. FR). */
  GATEWAYS_DEFAULT_REGION: Env.schema.string.optional(),
  /** Requests per gateway and messages per sender number within GATEWAYS_RATE_WINDOW. */
  GATEWAYS_RATE_PER_GATEWAY: Env.schema.number.optional(),
  GATEWAYS_RATE_PER_SENDER: Env.schema.number.optional(),
  GATEWAYS_RATE_WINDOW: Env.schema.string.optional(),
  /** The private token of the SMS Gateway for Android app's device registration (unset: off). */
  GATEWAYS_ANDROID_PRIVATE_TOKEN: Env.schema.string.optional(),
  /** Outbound SMS: the time a gateway has to confirm one it collected, and hand-outs in all. */
  GATEWAYS_SMS_ACK_TIMEOUT_MS: Env.schema.number.optional(),
  GATEWAYS_SMS_MAX_ATTEMPTS: Env.schema.number.optional(),
  /** Push (plugins/gateways/README.md): FCM HTTP v1 service account (JSON or file path), project, URLs. */
  GATEWAYS_FCM_SERVICE_ACCOUNT: Env.schema.string.optional(),
  GATEWAYS_FCM_PROJECT_ID: Env.schema.string.optional(),
  GATEWAYS_FCM_BASE_URL: Env.schema.string.optional(),
  GATEWAYS_FCM_TOKEN_URL: Env.schema.string.optional(),
  /** APNs provider token: the .p8 key (PEM or file path), its key id, the team id, the topic, the URL. */
  GATEWAYS_APNS_KEY: Env.schema.string.optional(),
  GATEWAYS_APNS_KEY_ID: Env.schema.string.optional(),
  GATEWAYS_APNS_TEAM_ID: Env.schema.string.optional(),
  GATEWAYS_APNS_TOPIC: Env.schema.string.optional(),
  GATEWAYS_APNS_BASE_URL: Env.schema.string.optional(),
  GATEWAYS_PUSH_TIMEOUT_MS: Env.schema.number.optional(),
  /** Web Push: the VAPID key pair (base64url) and subject; push services' hosts; http for tests only. */
  GATEWAYS_VAPID_PUBLIC_KEY: Env.schema.string.optional(),
  GATEWAYS_VAPID_PRIVATE_KEY: Env.schema.string.optional(),
  GATEWAYS_VAPID_SUBJECT: Env.schema.string.optional(),
  GATEWAYS_WEBPUSH_ENDPOINT_HOSTS: Env.schema.string.optional(),
  GATEWAYS_WEBPUSH_ALLOW_HTTP: Env.schema.boolean.optional(),
  /** E-mail out (plugins/gateways/README.md): SMTP server, its account, the From, time limit. */
  GATEWAYS_SMTP_HOST: Env.schema.string.optional(),
  GATEWAYS_SMTP_PORT: Env.schema.number.optional(),
  GATEWAYS_SMTP_SECURE: Env.schema.boolean.optional(),
  GATEWAYS_SMTP_USER: Env.schema.string.optional(),
  GATEWAYS_SMTP_PASSWORD: Env.schema.string.optional(),
  GATEWAYS_MAIL_FROM: Env.schema.string.optional(),
  GATEWAYS_SMTP_TIMEOUT_MS: Env.schema.number.optional(),
  GATEWAYS_SMTP_CONNECTIONS: Env.schema.number.optional(),
  /** E-mail in (plugins/gateways/README.md): the domain of book addresses (<b_c>.<b_o>@MAIL_DOMAIN). */
  MAIL_DOMAIN: Env.schema.string.optional(),
  /** The inbound SMTP listener (unset port: off), the webhook's bearer token, size and rate limits. */
  GATEWAYS_SMTP_LISTEN_PORT: Env.schema.number.optional(),
  GATEWAYS_SMTP_LISTEN_HOST: Env.schema.string.optional(),
  GATEWAYS_MAIL_INBOUND_TOKEN: Env.schema.string.optional(),
  GATEWAYS_MAIL_MAX_BYTES: Env.schema.number.optional(),
  GATEWAYS_MAIL_RATE_PER_SENDER: Env.schema.number.optional(),
})
