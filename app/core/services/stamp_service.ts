import type { Database } from '@adonisjs/lucid/database'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Logger } from '@adonisjs/core/logger'
import type { StampAllocator } from './stamp_allocator.js'
import { isTransientDbError } from './db_errors.js'
import { rpcError } from '#core/rpc/errors'

export interface WriteScope {
  trx: TransactionClientContract
  /** The stamp of this write: store it on every row the write touches. */
  stamp: number
  /** Runs after the transaction commits (events, jobs); never on rollback. */
  afterCommit(callback: () => unknown): void
}

const MAX_ATTEMPTS = 4

/**
 * The one way to write synced data. Each write gets a stamp, runs in a
 * transaction, and is retried on transient conflicts (deadlocks, busy SQLite);
 * after-commit callbacks run once it has committed.
 *
 * Readers must take `watermark()` BEFORE reading data and hand that value to
 * the client: a write with a lower stamp that commits after the read is then
 * still "after" the client's stamp on its next sync.
 */
export class StampService {
  constructor(
    private db: Database,
    private allocator: StampAllocator,
    private logger: Logger
  ) {}

  watermark(): Promise<number> {
    return this.allocator.watermark()
  }

  async write<T>(work: (scope: WriteScope) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const callbacks: (() => unknown)[] = []
      const stamp = await this.allocator.acquire()
      let result: T
      try {
        result = await this.db.transaction((trx) =>
          work({ trx, stamp, afterCommit: (callback) => callbacks.push(callback) })
        )
      } catch (error) {
        if (isTransientDbError(error)) {
          if (attempt < MAX_ATTEMPTS) {
            await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20))
            continue
          }
          throw rpcError(
            'DEADLOCK',
            'Deadlock: the database reported a transient conflict, retry the request'
          )
        }
        throw error
      } finally {
        await this.allocator.release(stamp)
      }
      for (const callback of callbacks) {
        try {
          await callback()
        } catch (error) {
          this.logger.error({ err: error, stamp }, 'after-commit callback failed')
        }
      }
      return result
    }
  }
}
