import { randomUUID } from 'node:crypto'
import type { RedisConnection } from '@adonisjs/redis'
import type { Logger } from '@adonisjs/core/logger'

/**
 * Tells every instance that a runtime setting changed, so each reloads the
 * overrides from the database (the one source of truth; the message carries
 * only the key). An abstract class: the provider binds the implementation
 * chosen at boot (Redis when configured, else this process only).
 */
export abstract class SettingsBus {
  abstract start(onChange: (key: string) => void | Promise<void>): Promise<void>
  abstract stop(): Promise<void>
  /** After the database write: every other instance reloads. */
  abstract announce(key: string): Promise<void>
}

/** One process: the service that wrote the change already applied it. */
export class LocalSettingsBus extends SettingsBus {
  async start() {}
  async stop() {}
  async announce() {}
}

/**
 * Several instances sharing Redis: one channel, `<REDIS_PREFIX>settings:changed`
 * (ioredis's key prefix does not apply to channels). An instance whose
 * subscriber reconnects reloads everything, since it may have missed messages.
 */
export class RedisSettingsBus extends SettingsBus {
  private readonly instanceId = randomUUID()
  readonly channel: string
  private onChange: ((key: string) => void | Promise<void>) | null = null
  private watched: unknown = null

  constructor(
    private redis: RedisConnection,
    private logger: Logger,
    prefix: string
  ) {
    super()
    this.channel = `${prefix}settings:changed`
  }

  async start(onChange: (key: string) => void | Promise<void>) {
    this.onChange = onChange
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000)
      this.redis.subscribe(this.channel, (message) => this.receive(message), {
        onSubscription: () => {
          clearTimeout(timer)
          resolve()
        },
        onError: (error: unknown) => {
          this.logger.error({ err: error }, 'settings: cannot subscribe to changes')
        },
      })
    })
    const subscriber = this.redis.ioSubscriberConnection
    if (subscriber && subscriber !== this.watched) {
      this.watched = subscriber
      // Messages sent while disconnected are lost: read every override again.
      subscriber.on('ready', () => void this.onChange?.('*'))
    }
  }

  async stop() {
    this.onChange = null
    try {
      await this.redis.unsubscribe(this.channel)
    } catch {
      // The subscriber connection is already gone (shutdown order): nothing to undo.
    }
  }

  async announce(key: string) {
    try {
      await this.redis.publish(this.channel, JSON.stringify({ key, from: this.instanceId }))
    } catch (error) {
      this.logger.error({ err: error, key }, 'settings: could not announce a change')
    }
  }

  private receive(message: string) {
    let parsed: { key?: unknown; from?: unknown }
    try {
      parsed = JSON.parse(message)
    } catch {
      return
    }
    if (parsed.from === this.instanceId || typeof parsed.key !== 'string') return
    void this.onChange?.(parsed.key)
  }
}
