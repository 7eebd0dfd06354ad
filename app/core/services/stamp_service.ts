import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { Logger } from '@adonisjs/core/logger'
import type { StampAllocator } from './stamp_allocator.js'
import { isTransientDbError } from './db_errors.js'
import { rpcError } from '#core/rpc/errors'
import { nativeTransaction } from '#core/native_sql'
import { foreground } from '#core/foreground'

export interface WriteScope {
  trx: TransactionClientContract
  /** The stamp of this write: store it on every row the write touches. */
  stamp: number
  /** Runs after the transaction commits (events, jobs); never on rollback. */
  afterCommit(callback: () => unknown): void
}

/** The scope of StampService.writeStatement: `client` runs each statement on its own (autocommit). */
export interface StatementScope extends Omit<WriteScope, 'trx'> {
  client: QueryClientContract
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

  /** Stops the allocator's background work (shutdown). */
  async close() {
    await this.allocator.close?.()
  }

  watermark(): Promise<number> {
    return this.allocator.watermark()
  }

  /** watermark() when the allocator knows it without waiting (in memory), else null. */
  watermarkNow(): number | null {
    return this.allocator.watermarkNow?.() ?? null
  }

  /**
   * The watermark and, where the allocator makes both in one round trip (Redis), a stamp for
   * the caller's next write (else null): a group commit with sends waiting asks both at once.
   * The stamp is in flight from now: pass it to write() (`stamp`), or to release() if unused.
   */
  async watermarkAndAcquire(): Promise<{ watermark: number; stamp: number | null }> {
    if (this.allocator.watermarkAndAcquire) return this.allocator.watermarkAndAcquire()
    return { watermark: await this.allocator.watermark(), stamp: null }
  }

  /** Releases a stamp of watermarkAndAcquire that no write used. */
  release(stamp: number): Promise<void> {
    return this.allocator.release(stamp)
  }

  /**
   * A write in a transaction: any number of statements, all or nothing. `stamp`: one
   * watermarkAndAcquire answered, used by the first attempt (a retry takes a new one).
   */
  write<T>(work: (scope: WriteScope) => Promise<T>, stamp?: number | null): Promise<T> {
    return this.stamped(
      (taken, afterCommit) =>
        this.db.transaction((trx) => work({ trx, stamp: taken, afterCommit })),
      stamp
    )
  }

  /**
   * `write` for work made only of native statements (app/core/native_sql.ts: trxQuery,
   * readQuery, writeQuery): the transaction is begun and committed on the driver, without knex
   * (nativeTransaction). `trx` has no query builder. `stamp`: as write's.
   */
  writeNative<T>(work: (scope: WriteScope) => Promise<T>, stamp?: number | null): Promise<T> {
    return this.stamped(
      (taken, afterCommit) => nativeTransaction((trx) => work({ trx, stamp: taken, afterCommit })),
      stamp
    )
  }

  /**
   * A write that is a single statement, run without BEGIN/COMMIT: one
   * statement is atomic by itself, and on MariaDB the two round trips saved
   * are most of a one-cell write's cost. `work` may read, but must issue at
   * most one write statement (a second one would not be atomic with it). `stamp`: as write's.
   */
  writeStatement<T>(
    work: (scope: StatementScope) => Promise<T>,
    stamp?: number | null
  ): Promise<T> {
    return this.stamped(
      (taken, afterCommit) => work({ client: this.db.connection(), stamp: taken, afterCommit }),
      stamp
    )
  }

  /** Runs `attempt` under a new stamp, retried on transient conflicts; then the after-commit callbacks. */
  private async stamped<T>(
    attempt: (stamp: number, afterCommit: (callback: () => unknown) => void) => Promise<T>,
    given?: number | null
  ): Promise<T> {
    for (let attemptNumber = 1; ; attemptNumber++) {
      const callbacks: (() => unknown)[] = []
      const stamp = attemptNumber === 1 && given ? given : await this.allocator.acquire()
      let result: T
      foreground.beginWrite()
      try {
        result = await attempt(stamp, (callback) => callbacks.push(callback))
      } catch (error) {
        if (isTransientDbError(error)) {
          if (attemptNumber < MAX_ATTEMPTS) {
            await new Promise((resolve) =>
              setTimeout(resolve, 5 * attemptNumber + Math.random() * 20)
            )
            continue
          }
          throw rpcError(
            'DEADLOCK',
            'Deadlock: the database reported a transient conflict, retry the request'
          )
        }
        throw error
      } finally {
        foreground.endWrite()
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
