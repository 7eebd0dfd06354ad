/*
 * The Quire typed client (docs/client.md): `QuireClient` with one method per
 * api.php operation, the key flow, the socket and uploads.
 */
export { QuireClient } from './client.js'
export type { TusOptions, TusResult, TusSource, TusTarget } from './client.js'
export {
  QuireTransport,
  QuireError,
  TransportError,
  bracketPairs,
  type CallOptions,
  type ClientOptions,
  type Credentials,
  type Envelope,
  type Form,
  type OkAnswer,
  type RawAnswer,
  type UploadFile,
} from './runtime.js'
export {
  QuireSocket,
  REVOKED_CLOSE_CODE,
  type ServerFrame,
  type SocketOptions,
  type WebSocketConstructor,
} from './socket.js'
export * from './generated.js'
