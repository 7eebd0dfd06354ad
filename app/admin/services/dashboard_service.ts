import app from '@adonisjs/core/services/app'
import type { QueueService } from '#core/services/queue_service'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type {
  DashboardActivity,
  DashboardChart,
  DashboardFigure,
  DashboardPart,
} from '#core/plugins/define_plugin'
import type User from '#models/user'
import { mayUse } from '#admin/navigation'
import { KernelDashboard } from './kernel_dashboard.js'

const HOURS = 24
const ACTIVITY_LINES = 12

/** A chart as the page receives it: one count per hour of the last day, oldest first. */
export interface ChartProps {
  key: string
  title: string
  unit: string
  hours: number[]
  counts: number[]
}

/**
 * What the dashboard shows, gathered from its parts: the kernel's (users,
 * API sessions, new accounts) and each enabled plugin's manifest
 * `admin.dashboard` (books, tables, sessions...), in plugin order. The console
 * knows no plugin: it asks each part and lays out what they answer. A
 * container singleton (ConsoleProvider).
 */
export class DashboardService {
  private parts: { permission?: string; part: DashboardPart }[] | null = null

  constructor(
    private queue: QueueService,
    private registry: PluginRegistry,
    private kernel: KernelDashboard
  ) {}

  /**
   * The parts this administrator may see (a plugin's part needs its section's
   * permission, as its pages do), built once by the container (a part may
   * inject services).
   */
  private async partsFor(viewer: User): Promise<DashboardPart[]> {
    if (!this.parts) {
      const parts: { permission?: string; part: DashboardPart }[] = [{ part: this.kernel }]
      for (const plugin of this.registry.plugins) {
        if (!plugin.admin?.dashboard) continue
        const { default: Part } = await plugin.admin.dashboard()
        parts.push({ permission: plugin.admin.permission, part: await app.container.make(Part) })
      }
      this.parts = parts
    }
    return this.parts.filter(({ permission }) => mayUse(viewer, permission)).map(({ part }) => part)
  }

  async figures(viewer: User): Promise<DashboardFigure[]> {
    const parts = await this.partsFor(viewer)
    const figures = await Promise.all(parts.map((part) => part.figures()))
    return figures.flat()
  }

  async queueHealth() {
    try {
      return { ok: true, counts: await this.queue.counts() }
    } catch {
      return { ok: false, counts: null }
    }
  }

  /** Per hour over the last day (the current hour last). */
  async charts(viewer: User, now = Date.now()): Promise<ChartProps[]> {
    const lastHour = Math.floor(now / 3_600_000)
    const window = { firstHour: lastHour - HOURS + 1, lastHour }
    const parts = await this.partsFor(viewer)
    const charts: DashboardChart[][] = await Promise.all(
      parts.map((part) => part.charts?.(window) ?? [])
    )
    return charts.flat().map((chart) => {
      const hours: number[] = []
      const counts: number[] = []
      for (let hour = window.firstHour; hour <= window.lastHour; hour++) {
        hours.push(hour * 3_600_000)
        counts.push(chart.perHour.get(hour) ?? 0)
      }
      return { key: chart.key, title: chart.title, unit: chart.unit, hours, counts }
    })
  }

  /** The newest lines of every part, newest first. */
  async activity(viewer: User): Promise<DashboardActivity[]> {
    const parts = await this.partsFor(viewer)
    const lines = await Promise.all(parts.map((part) => part.activity?.(ACTIVITY_LINES) ?? []))
    return lines
      .flat()
      .sort((a, b) => b.at - a.at)
      .slice(0, ACTIVITY_LINES)
  }

  /** Events after which figures may have changed: the kernel's and every plugin's. */
  liveEvents(): string[] {
    const events = new Set(KernelDashboard.liveEvents)
    for (const plugin of this.registry.plugins)
      for (const event of plugin.admin?.liveEvents ?? []) events.add(event)
    return [...events]
  }
}
