import type User from '#models/user'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import { DEFAULT_RIGHTS } from '#core/services/user_service'

/** One entry of the console's navigation, as the layout receives it. */
export interface NavLink {
  label: string
  href: string
  /** The plugin that declared it (`core` for the kernel's own pages). */
  source: string
}

/** The console's own pages: the kernel's entries before and after the plugins' ones. */
const CORE_BEFORE = [
  { label: 'Dashboard', path: '', permission: 'admin' },
  { label: 'Users', path: '/users', permission: 'admin' },
]
const CORE_AFTER = [
  { label: 'Audit log', path: '/audit', permission: 'admin' },
  { label: 'Health', path: '/health', permission: 'admin' },
  { label: 'Settings', path: '/settings', permission: 'admin' },
  { label: 'Plugins', path: '/plugins', permission: 'admin' },
]

/** A user's rights as getUserInfo reports them (defaults, then `admin` from is_admin, then stored ones). */
export function rightsOf(user: User): Record<string, boolean> {
  return { ...DEFAULT_RIGHTS, admin: user.isAdmin, ...user.rights }
}

/** Whether the signed-in administrator holds `permission` (a right name; none = any administrator). */
export function mayUse(user: User, permission: string | undefined): boolean {
  return user.isAdmin && (permission === undefined || rightsOf(user)[permission] === true)
}

/**
 * The navigation: the kernel's pages, then every enabled plugin's manifest
 * `admin.nav` entries (mounted under /admin/<plugin id>), in plugin order,
 * keeping only what this administrator's rights allow (the section's permission,
 * which also guards its routes, and the entry's own).
 */
export function navigationFor(registry: PluginRegistry, user: User): NavLink[] {
  const core = (entries: typeof CORE_BEFORE) =>
    entries
      .filter((entry) => mayUse(user, entry.permission))
      .map((entry) => ({ label: entry.label, href: `/admin${entry.path}`, source: 'core' }))
  const contributed = registry.plugins.flatMap((plugin) =>
    (plugin.admin?.nav ?? [])
      .filter((entry) => mayUse(user, plugin.admin?.permission) && mayUse(user, entry.permission))
      .map((entry) => ({
        label: entry.label,
        href: `/admin/${plugin.id}${entry.path ?? ''}`,
        source: plugin.id,
      }))
  )
  return [...core(CORE_BEFORE), ...contributed, ...core(CORE_AFTER)]
}
