import { existsSync, readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import type { QueueService } from '#core/services/queue_service'
import type { PluginRegistry } from '#core/plugins/plugin_registry'
import type { HealthPart, HealthSection } from '#core/plugins/define_plugin'
import type { InstanceRegistry } from '#core/health/instances'
import { ERRORS_KEPT, recentErrors, type LoggedError } from '#core/health/error_log'
import { formatBytes } from '#core/health/format'
import { readiness } from '#core/http/readiness'
import quireConfig from '#config/quire'
import env from '#start/env'

const DEAD_JOBS_SHOWN = 20

/**
 * What the console's Health page shows: this build, every instance, the
 * database, Redis, the job queue (with its failed jobs), each plugin's
 * sections (manifest `admin.health`) and the last errors logged. A container
 * singleton (ConsoleProvider).
 */
export class HealthService {
  private parts: HealthPart[] | null = null

  constructor(
    private queue: QueueService,
    private registry: PluginRegistry,
    private instances: InstanceRegistry
  ) {}

  /** Version, build and process. */
  about() {
    const stamp = app.makePath('quire-build.json')
    let build = 'from sources (npm run dev or tests)'
    if (existsSync(stamp)) {
      const made = JSON.parse(readFileSync(stamp, 'utf8'))
      build = `compiled${made.builtAt ? `, ${new Date(made.builtAt).toISOString()}` : ''}`
    }
    const { version } = JSON.parse(readFileSync(app.makePath('package.json'), 'utf8'))
    return {
      version: String(version),
      build,
      node: process.version,
      environment: app.inProduction ? 'production' : app.inTest ? 'test' : 'development',
      uptimeSeconds: Math.floor(process.uptime()),
      instance: this.instances.id,
    }
  }

  instancesSeen() {
    return this.instances.all()
  }

  /** Kind, version, round trip and pool use of the database; Redis's round trip and memory. */
  async stores() {
    const state = await readiness()
    const mysql = db.connection().dialect.name === 'mysql'
    const versionRow = await db
      .rawQuery(mysql ? 'SELECT VERSION() AS version' : 'SELECT sqlite_version() AS version')
      .catch(() => null)
    const rows = versionRow ? (mysql ? versionRow[0] : versionRow) : []
    const pool = (db.connection().getWriteClient() as any).client?.pool
    const database = {
      kind: mysql ? 'MySQL / MariaDB' : 'SQLite (embedded)',
      version: rows[0]?.version ? String(rows[0].version) : 'unknown',
      ok: state.checks.database.ok,
      roundTripMs: state.checks.database.ms,
      error: state.checks.database.error ?? null,
      pool: pool
        ? {
            used: pool.numUsed(),
            free: pool.numFree(),
            waiting: pool.numPendingAcquires(),
            max: pool.max,
          }
        : null,
    }
    const redisCheck = state.checks.redis
    if (redisCheck === 'not configured') return { database, redis: null }
    let memory = 'unknown'
    let clients = 'unknown'
    if (redisCheck.ok) {
      const { default: redis } = await import('@adonisjs/redis/services/main')
      const info = await redis
        .connection()
        .info()
        .catch(() => '')
      memory = /used_memory_human:(\S+)/.exec(info)?.[1] ?? memory
      clients = /connected_clients:(\d+)/.exec(info)?.[1] ?? clients
    }
    return {
      database,
      redis: {
        ok: redisCheck.ok,
        roundTripMs: redisCheck.ms,
        error: redisCheck.error ?? null,
        memory,
        clients,
      },
    }
  }

  /** States, unfinished jobs per name, and the newest failed jobs with their error. */
  async jobs() {
    try {
      const [counts, names, dead] = await Promise.all([
        this.queue.counts(),
        this.queue.countsByName(),
        this.queue.deadLetters(DEAD_JOBS_SHOWN),
      ])
      return {
        ok: true,
        driver: this.queue.driverKind === 'bullmq' ? 'Redis (BullMQ)' : 'in this process',
        counts,
        byName: names.byName,
        sampled: names.sampled,
        failed: dead.map((job) => ({
          id: job.id,
          name: job.name,
          attempts: job.attemptsFailed,
          error: job.error.slice(0, 500),
          failedAt: job.failedAt.getTime(),
        })),
      }
    } catch (error) {
      return { ok: false, error: (error as Error).message.slice(0, 200) }
    }
  }

  /** Puts a failed job back in line (the Retry button); false if it is no longer failed. */
  retryJob(id: string) {
    return this.queue.retryDead(id)
  }

  /** Each plugin's sections; a part that fails shows as a failing section, not a broken page. */
  async pluginSections(): Promise<HealthSection[]> {
    if (!this.parts) {
      const parts: HealthPart[] = []
      for (const plugin of this.registry.plugins) {
        if (!plugin.admin?.health) continue
        const { default: Part } = await plugin.admin.health()
        parts.push(await app.container.make(Part))
      }
      this.parts = parts
    }
    const sections = await Promise.all(
      this.parts.map((part) =>
        part.sections().catch((error: Error) => [
          {
            key: part.constructor.name,
            title: part.constructor.name,
            ok: false,
            lines: [{ label: 'Error', value: error.message.slice(0, 200) }],
          },
        ])
      )
    )
    return sections.flat()
  }

  /** The last errors logged: every instance's with Redis, else this process's. Newest first. */
  async errors(): Promise<LoggedError[]> {
    if (!quireConfig.redisEnabled) return recentErrors()
    const { default: redis } = await import('@adonisjs/redis/services/main')
    const key = `${env.get('REDIS_PREFIX', 'quire:')}errors`
    const raw = await redis
      .connection()
      .lrange(key, 0, ERRORS_KEPT - 1)
      .catch(() => null)
    if (!raw) return recentErrors()
    return raw.flatMap((line) => {
      try {
        return [JSON.parse(line) as LoggedError]
      } catch {
        return []
      }
    })
  }

  /** Memory of this process, for the about box. */
  memory() {
    const usage = process.memoryUsage()
    return { rss: formatBytes(usage.rss), heap: formatBytes(usage.heapUsed) }
  }
}
