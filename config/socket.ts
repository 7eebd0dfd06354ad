import env from '#start/env'
import quireConfig from '#config/quire'

/** `/live/socket` is also `/dev/socket` (QUIRE_URL_PREFIXES), as api.php is; no trailing slash. */
function socketPaths(path: string) {
  const trimmed = path.replace(/\/+$/, '')
  const paths = new Set([trimmed])
  const prefix = quireConfig.urlPrefixes.find((candidate) => trimmed.startsWith(`${candidate}/`))
  if (prefix) {
    for (const other of quireConfig.urlPrefixes) paths.add(other + trimmed.slice(prefix.length))
  }
  return paths
}

/**
 * The realtime channel (docs/socket.md). Limits protect the server and the
 * other connections: a client over them gets an error frame, then a close
 * with a documented code.
 */
const socketConfig = {
  /** Upgrade path of the WebSocket endpoint on the HTTP server. */
  path: env.get('SOCKET_PATH', '/live/socket'),
  /** Every path the upgrade answers: SOCKET_PATH, and under each environment prefix when it starts with one. */
  paths: socketPaths(env.get('SOCKET_PATH', '/live/socket')),
  /** A port of its own for the socket (every path there is the socket), besides the HTTP server's path. */
  port: env.get('SOCKET_PORT'),
  /** Larger frames close the connection with 1009 (message too big). */
  maxFrameBytes: env.get('SOCKET_MAX_FRAME_BYTES', 512 * 1024),
  /** Sustained frames per second per connection (token bucket refill rate). */
  framesPerSecond: env.get('SOCKET_FRAMES_PER_SECOND', 50),
  /** Frames a connection may send at once above the sustained rate (bucket size). */
  frameBurst: env.get('SOCKET_FRAME_BURST', 200),
  /** Malformed or refused-by-limit frames tolerated per connection before it is closed. */
  maxBadFrames: env.get('SOCKET_MAX_BAD_FRAMES', 20),
  /** Interval of WebSocket pings; a connection silent for two intervals is reaped. */
  heartbeatMs: env.get('SOCKET_HEARTBEAT_MS', 30_000),
  /** How long a frame's sesskey check is reused for the next frames with the same keys. */
  authRecheckMs: env.get('SOCKET_AUTH_RECHECK_MS', 30_000),
  /** A connection that has sent no valid credentials within this delay is closed. */
  attachTimeoutMs: env.get('SOCKET_ATTACH_TIMEOUT_MS', 60_000),
  /** Book updates ready (type 8) to one user are coalesced within this delay. */
  bookUpdatesDelayMs: env.get('SOCKET_BOOK_UPDATES_DELAY_MS', 25),
  /** Frames queued per connection while earlier ones are handled (beyond: refused as a flood). */
  maxPendingFrames: 100,
  /** Publish server-to-client messages on per-user Transmit (SSE) channels. */
  transmit: env.get('TRANSMIT_ENABLED', true),
}

export type SocketConfig = typeof socketConfig

export default socketConfig
