import type { ApplicationService } from '@adonisjs/core/types'
import type { Router } from '@adonisjs/core/http'
import type { OperationClass } from '#core/rpc/base_operation'
import type { RealtimeBinding } from '#core/socket/socket_handler'
import type { SettingDeclaration } from '#core/settings/types'
import type { Paged, PageRequest } from '#core/paging'
import type User from '#models/user'
import type { AuditActor } from '#core/audit/audit_log'
import type { PluginReference } from '#core/reference/types'

/** A lazily imported module whose default export is T (keeps boot cheap: nothing loads until used). */
export type LazyDefault<T> = () => Promise<{ default: T }>

/**
 * Contributes fields to getUserInfo's userInfo (e.g. nbBooks from the books plugin): at once
 * where it can answer without waiting, else a promise.
 */
export type UserInfoContributor = (
  userId: number
) => Record<string, unknown> | Promise<Record<string, unknown>>

/** A job handler: receives the payload; throwing makes the queue retry with backoff. */
export type JobHandler = (
  payload: any,
  job: { id: string; attempt: number; name: string }
) => Promise<unknown>

/** What a plugin's routes function receives besides the router. */
export interface PluginRoutesContext {
  app: ApplicationService
  pluginId: string
}

/**
 * Registers a plugin's HTTP routes outside api.php (in the style of
 * @adonisjs/transmit's `registerRoutes`): called once at boot, before the
 * router commits, with the application's router. The plugin reads its own
 * settings (its mount point, e.g. AUTH_URL_PREFIX) from its config. Whatever
 * it registers is recorded in the registry (`plugin:list` shows it), and a
 * method + path registered by two plugins is a boot error.
 */
export type PluginRoutes = (router: Router, context: PluginRoutesContext) => void | Promise<void>

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
  /** HTTP routes outside api.php (a console, `{auth_url}`...): see PluginRoutes. */
  routes?: LazyDefault<PluginRoutes>
  /** Demo data for `npm start` on a fresh install; receives the demo admin's user id. */
  demo?: LazyDefault<(context: { adminId: number }) => Promise<void>>
  /**
   * What the API reference, AsyncAPI document and MCP tools say of the plugin's
   * operations, socket messages and HTTP routes (docs/api-reference.md).
   */
  reference?: LazyDefault<PluginReference>
  /** The plugin's provider class: binds its services and takes part in the app's phases. */
  provider?: LazyDefault<PluginProviderClass>
  /** Pages of the admin console (README "Console": adding a page). */
  admin?: PluginAdminSection
  /**
   * The plugin's settings (docs/settings.md): plain data, each with its env
   * variable; read with `settings.integer('<id>.<key>')` (#core/settings/main).
   */
  settings?: SettingDeclaration[]
}

/** One entry of the console's navigation; `path` is relative to the plugin's mount, /admin/<id>. */
export interface PluginAdminNavEntry {
  label: string
  path?: string
  /** A right an administrator needs to see it, besides the section's permission. */
  permission?: string
}

/**
 * A plugin's console routes, registered inside the console's route group
 * (session, CSRF, a signed-in administrator) under the prefix /admin/<id>.
 * Handlers render pages with `ctx.inertia.render('<id>/<page>', props)`,
 * resolved to plugins/<id>/admin/pages/<page>.tsx by the console's bundle.
 */
/** Synchronous: the routes must be declared while the console's group is open. */
export type PluginAdminRoutes = (router: Router, context: PluginRoutesContext) => void

export interface PluginAdminSection {
  /** Entries the plugin adds to the console's navigation. */
  nav?: PluginAdminNavEntry[]
  /** The right (getUserInfo `rights` name) an administrator needs for every page of the plugin. */
  permission?: string
  routes?: LazyDefault<PluginAdminRoutes>
  /** The plugin's part of the dashboard: a class the container builds once (see DashboardPart). */
  dashboard?: LazyDefault<new (...args: any[]) => DashboardPart>
  /** Events (emitter names) after which the plugin's dashboard figures may have changed. */
  liveEvents?: string[]
  /** The plugin's section of the Health page: a class the container builds once (see HealthPart). */
  health?: LazyDefault<new (...args: any[]) => HealthPart>
  /** Panels on the console's user page: a class the container builds once (see UserPanelPart). */
  userPanels?: LazyDefault<new (...args: any[]) => UserPanelPart>
}

/** A panel of the console's user page: a list of rows the page searches and pages on the server. */
export interface UserPanel {
  /**
   * Unique on the page (camelCase): the list's prop and its query-string
   * names (`<key>Page`, `<key>Search`).
   */
  key: string
  title: string
  /** One sentence under the title, in plain words. */
  description?: string
  /** `date` cells are ISO strings the page shows as dates. */
  columns: { key: string; label: string; format?: 'text' | 'date' }[]
  /** The search box's hint; no search box without it. */
  searchPlaceholder?: string
  /** A button on every row (end a session...), confirmed by `question`; `act` performs it. */
  rowAction?: { action: string; label: string; question: string; notice: string }
}

/** One row of a panel: its id (what `act` receives) and its cells by column key. */
export interface UserPanelRow {
  id: string
  cells: Record<string, string | number | null>
}

/**
 * What a plugin shows on the console's user page. Each method is a service
 * call of the plugin's; the console knows nothing of what a panel lists.
 */
export interface UserPanelPart {
  panels(): UserPanel[]
  rows(panelKey: string, user: User, request: PageRequest): Promise<Paged<UserPanelRow>>
  /** A row's action, done by `by` (the audit log's actor); false when nothing was done. */
  act(panelKey: string, action: string, user: User, rowId: string, by: AuditActor): Promise<boolean>
}

/** One section of the console's Health page (media storage, an outbox...). */
export interface HealthSection {
  key: string
  title: string
  /** False shows the section as failing (its lines say why). */
  ok: boolean
  lines: { label: string; value: string }[]
}

/** What a plugin shows on the Health page: cheap probes of what it owns. */
export interface HealthPart {
  sections(): Promise<HealthSection[]>
}

/** One figure of the dashboard (a count), linked to a console page when `href` is set. */
export interface DashboardFigure {
  /** Stable and unique across plugins (the page's `data-figure`). */
  key: string
  label: string
  value: number
  href?: string
}

/** The hours a chart covers: hour numbers (ms since the epoch / 3,600,000), both included. */
export interface DashboardWindow {
  firstHour: number
  lastHour: number
}

/** A chart of counts per hour; hours it does not name count 0. */
export interface DashboardChart {
  key: string
  title: string
  /** What is counted, in the plural ("messages"): the chart's accessible label. */
  unit: string
  perHour: Map<number, number>
}

/** One line of the dashboard's recent activity. */
export interface DashboardActivity {
  /** Milliseconds since the epoch. */
  at: number
  /** Who did it (a user's code), when known. */
  actor?: string
  text: string
  href?: string
}

/**
 * What a plugin shows on the console's dashboard. Each method is one service
 * call of the plugin's (the console reads no plugin table itself); each must
 * stay cheap on a large database: counts from indexes, maintained counters or
 * a cached query, never a query per table.
 */
export interface DashboardPart {
  figures(): Promise<DashboardFigure[]>
  charts?(window: DashboardWindow): Promise<DashboardChart[]>
  activity?(limit: number): Promise<DashboardActivity[]>
}

/**
 * A plugin's provider, shaped like an AdonisJS provider: `register()` binds the
 * plugin's services by class (see bindSingletons), the other phases are
 * forwarded by PluginsProvider in plugin order (shutdown in reverse). Plugins
 * are loaded during the application's boot, so `register()` runs then too.
 */
export interface PluginProvider {
  register?(): void | Promise<void>
  boot?(): void | Promise<void>
  start?(): void | Promise<void>
  ready?(): void | Promise<void>
  shutdown?(): void | Promise<void>
}

export type PluginProviderClass = new (app: ApplicationService) => PluginProvider

/** Typed identity helper for plugin.ts files. */
export function definePlugin<const T extends PluginManifest>(manifest: T): T {
  return manifest
}
