import type { OperationClass } from '#core/rpc/base_operation'
import type { RealtimeBinding } from '#core/socket/socket_handler'

/** A lazily imported module whose default export is T (keeps boot cheap: nothing loads until used). */
export type LazyDefault<T> = () => Promise<{ default: T }>

/** Contributes fields to getUserInfo's userInfo (e.g. nbBooks from the books plugin). */
export type UserInfoContributor = (userId: number) => Promise<Record<string, unknown>>

/** A job handler: receives the payload; throwing makes the queue retry with backoff. */
export type JobHandler = (
  payload: any,
  job: { id: string; attempt: number; name: string }
) => Promise<unknown>

/**
 * A plugin manifest is plain data: every entry is a lazy import, so the loader
 * can check names (duplicates, dependency order) without loading any code.
 */
export interface PluginManifest {
  /** Must equal the plugin's folder name under plugins/. */
  id: string
  version: string
  description?: string
  /** Plugins this one uses; they must come earlier in config/plugins.ts. */
  dependsOn?: string[]
  /** api.php operations, keyed by wire name. */
  operations?: Record<string, LazyDefault<OperationClass>>
  /** Socket message handlers (SocketHandler classes, #core/socket/socket_handler), keyed by message type. */
  socket?: Record<number, LazyDefault<unknown>>
  /** Socket system messages (type 11 `msg` values; SystemMessageHandler classes) handled by this plugin. */
  systemMessages?: Record<string, LazyDefault<unknown>>
  /** Forwards the plugin's events to sockets and SSE channels (docs/socket.md). */
  realtime?: LazyDefault<RealtimeBinding>
  /** Background jobs, keyed by job name (`<plugin>.<job>`). */
  jobs?: Record<string, LazyDefault<JobHandler>>
  /** Fields this plugin adds to getUserInfo's userInfo. */
  userInfo?: LazyDefault<UserInfoContributor>
  /** Demo data for `npm start` on a fresh install; receives the demo admin's user id. */
  demo?: LazyDefault<(context: { adminId: number }) => Promise<void>>
  /** Container bindings and boot hooks of the plugin's services. */
  provider?: LazyDefault<{ boot?(): Promise<void> | void; shutdown?(): Promise<void> | void }>
}

/** Typed identity helper for plugin.ts files. */
export function definePlugin<const T extends PluginManifest>(manifest: T): T {
  return manifest
}
