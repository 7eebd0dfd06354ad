import app from '@adonisjs/core/services/app'
import { inject } from '@adonisjs/core'
import type User from '#models/user'
import type { PageRequest } from '#core/paging'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import type { UserPanel, UserPanelPart } from '#core/plugins/define_plugin'
import { mayUse } from '#admin/navigation'
import type { AuditActor } from '#core/audit/audit_log'

interface Contributed {
  pluginId: string
  permission?: string
  part: UserPanelPart
  panel: UserPanel
}

/** The user page's own props: a panel's key may not take one of these names. */
const RESERVED = new Set(['user', 'twoFactor', 'delegations', 'sesskeys', 'panels'])

/** Built once per process (the container builds each plugin's part once, as the dashboard's). */
let contributed: Promise<Contributed[]> | null = null

async function build(registry: PluginRegistry): Promise<Contributed[]> {
  const all: Contributed[] = []
  for (const plugin of registry.plugins) {
    if (!plugin.admin?.userPanels) continue
    const { default: Part } = await plugin.admin.userPanels()
    const part = await app.container.make(Part)
    for (const panel of part.panels()) {
      if (RESERVED.has(panel.key) || all.some((other) => other.panel.key === panel.key))
        throw new Error(
          `User panel "${panel.key}" of plugin ${plugin.id} is not unique on the page`
        )
      all.push({ pluginId: plugin.id, permission: plugin.admin.permission, part, panel })
    }
  }
  return all
}

/**
 * The panels plugins add to the console's user page (manifest
 * `admin.userPanels`), as far as the viewing administrator's rights allow
 * (a plugin's section permission, as for its pages). The console renders
 * them without knowing what they list.
 */
@inject()
export class UserPanelsService {
  constructor(private registry: PluginRegistry) {}

  private async visible(viewer: User) {
    contributed ??= build(this.registry).catch((error) => {
      contributed = null
      throw error
    })
    const all = await contributed
    return all.filter((entry) => mayUse(viewer, entry.permission))
  }

  /** The panels' descriptions, each with a loader of its rows (an Inertia prop named by its key). */
  async panelsFor(viewer: User, user: User, page: (list: string) => Promise<PageRequest>) {
    const entries = await this.visible(viewer)
    return {
      panels: entries.map(({ pluginId, panel }) => ({ ...panel, pluginId })),
      rows: Object.fromEntries(
        entries.map(({ part, panel }) => [
          panel.key,
          async () => part.rows(panel.key, user, await page(panel.key)),
        ])
      ),
    }
  }

  /** A row's action; the panel's notice when done, null for an unknown panel or action. */
  async act(
    viewer: User,
    user: User,
    panelKey: string,
    action: string,
    target: { rowId: string; by: AuditActor }
  ) {
    const visible = await this.visible(viewer)
    const entry = visible.find(({ panel }) => panel.key === panelKey)
    if (!entry || entry.panel.rowAction?.action !== action) return null
    const done = await entry.part.act(panelKey, action, user, target.rowId, target.by)
    return done ? entry.panel.rowAction.notice : null
  }
}
