import type {
  JobHandler,
  LazyDefault,
  PluginManifest,
  UserInfoContributor,
} from './define_plugin.js'
import type { OperationClass } from '#core/rpc/base_operation'

export class PluginBootError extends Error {}

/**
 * A lazy import that runs once. Re-importing a loaded module still costs a
 * trip through the module resolver (expensive under a TypeScript loader), and
 * these loaders sit on hot paths (operations, socket handlers, contributors).
 */
function once<T>(load: LazyDefault<T>): LazyDefault<T> {
  let loading: ReturnType<LazyDefault<T>> | null = null
  return () => {
    loading ??= load().catch((error) => {
      loading = null
      throw error
    })
    return loading
  }
}

interface Claim<T> {
  pluginId: string
  load: LazyDefault<T>
}

/** An HTTP route a plugin registered: its methods and its full pattern (prefixes applied). */
export interface PluginRoute {
  methods: string[]
  pattern: string
}

/**
 * What the enabled plugins registered: operations, socket handlers, system
 * messages and jobs, each claimed by exactly one plugin.
 */
export class PluginRegistry {
  readonly plugins: PluginManifest[] = []
  readonly operations = new Map<string, Claim<OperationClass>>()
  readonly socketTypes = new Map<number, Claim<unknown>>()
  readonly systemMessages = new Map<string, Claim<unknown>>()
  readonly jobs = new Map<string, Claim<JobHandler>>()
  readonly userInfoContributors: LazyDefault<UserInfoContributor>[] = []
  /** `METHOD pattern` -> the plugin that registered it (PluginManifest.routes). */
  readonly routes = new Map<string, { pluginId: string }>()
  private routesByPlugin = new Map<string, PluginRoute[]>()

  /**
   * Adds a manifest after checking it against those already registered.
   * `folder` is the folder the manifest was loaded from (null for the kernel).
   */
  register(manifest: PluginManifest, folder: string | null) {
    if (folder !== null && manifest.id !== folder) {
      throw new PluginBootError(
        `Plugin in folder "plugins/${folder}" declares id "${manifest.id}": the id must match its folder`
      )
    }
    if (this.plugins.some((plugin) => plugin.id === manifest.id)) {
      throw new PluginBootError(`Plugin "${manifest.id}" is enabled twice`)
    }
    for (const dependency of manifest.dependsOn ?? []) {
      if (!this.plugins.some((plugin) => plugin.id === dependency)) {
        throw new PluginBootError(
          `Plugin "${manifest.id}" depends on "${dependency}", which must be enabled before it in config/plugins.ts`
        )
      }
    }

    this.claimAll(this.operations, manifest.operations, manifest.id, 'operation', String)
    this.claimAll(this.socketTypes, manifest.socket, manifest.id, 'socket type', Number)
    this.claimAll(
      this.systemMessages,
      manifest.systemMessages,
      manifest.id,
      'system message',
      String
    )
    this.claimAll(this.jobs, manifest.jobs, manifest.id, 'job', String)
    if (manifest.userInfo) this.userInfoContributors.push(once(manifest.userInfo))
    this.plugins.push(manifest)
  }

  private claimAll<K, T>(
    target: Map<K, Claim<T>>,
    entries: Record<string | number, LazyDefault<T>> | undefined,
    pluginId: string,
    kind: string,
    toKey: (raw: string) => K
  ) {
    for (const [rawKey, load] of Object.entries(entries ?? {})) {
      const key = toKey(rawKey)
      const existing = target.get(key)
      if (existing) {
        throw new PluginBootError(
          `The ${kind} "${rawKey}" is claimed by both plugin "${existing.pluginId}" and plugin "${pluginId}"`
        )
      }
      target.set(key, { pluginId, load: once(load) })
    }
  }

  /**
   * Records the HTTP routes a plugin's `routes` function registered. A method
   * and pattern already registered by another plugin (or twice by the same
   * one) is a boot error naming both.
   */
  claimRoutes(pluginId: string, routes: PluginRoute[]) {
    for (const route of routes) {
      for (const method of route.methods) {
        const key = `${method} ${route.pattern}`
        const existing = this.routes.get(key)
        if (existing) {
          throw new PluginBootError(
            existing.pluginId === pluginId
              ? `Plugin "${pluginId}" registers the route "${key}" twice`
              : `The route "${key}" is claimed by both plugin "${existing.pluginId}" and plugin "${pluginId}"`
          )
        }
        this.routes.set(key, { pluginId })
      }
    }
    this.routesByPlugin.set(pluginId, [...(this.routesByPlugin.get(pluginId) ?? []), ...routes])
  }

  /** The HTTP routes a plugin registered, in registration order. */
  routesOf(pluginId: string): PluginRoute[] {
    return this.routesByPlugin.get(pluginId) ?? []
  }
}
