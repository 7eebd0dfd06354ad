import db from '@adonisjs/lucid/services/db'
import { KeyedLock } from './keyed_lock.js'

/** How long an attach waits for another instance's attach to the same list (seconds). */
const WAIT_SECONDS = 60

/**
 * Named locks held at once by this process. Each holds a pooled connection
 * while its task needs others: unbounded, 20 uploads to 20 messages would
 * take the whole pool (20) for locks and wait forever for a connection to
 * write with. Beyond this many, attaches queue in the process.
 */
const MAX_HELD = 4

export class LockTimeoutError extends Error {}

/** At most `limit` tasks at a time; the others wait their turn, first come first served. */
class Semaphore {
  private active = 0
  private waiting: (() => void)[] = []

  constructor(private limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.active++
    try {
      return await task()
    } finally {
      // The slot passes straight to the next waiter (active stays the same), or is freed.
      const next = this.waiting.shift()
      if (next) next()
      else this.active--
    }
  }
}

/**
 * Runs tasks with the same key one after another, in this process and across
 * every instance sharing the database: two uploads to one message or file
 * cell, on two servers, append to its list in turn instead of both writing
 * from the same stale copy (the later write would drop the other's file).
 *
 * On MySQL/MariaDB the key is a named lock (GET_LOCK) held by one pooled
 * connection for the task's duration; the task itself uses other connections,
 * so the list is read after the lock is taken and written before it is let go.
 * SQLite has one writer process by design (several instances need MySQL):
 * the in-process queue is the lock there.
 */
export class SharedLock {
  private local = new KeyedLock()
  private held = new Semaphore(MAX_HELD)

  constructor(private prefix: string) {}

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.local.run(key, () =>
      db.primaryConnectionName === 'mysql'
        ? this.held.run(() => this.acrossInstances(key, task))
        : task()
    )
  }

  private async acrossInstances<T>(key: string, task: () => Promise<T>): Promise<T> {
    // Named locks are server-wide and at most 64 characters long.
    const name = `${this.prefix}:${key}`.slice(0, 64)
    const holder = await db.transaction()
    try {
      const [rows] = await holder.rawQuery('SELECT GET_LOCK(?, ?) AS got', [name, WAIT_SECONDS])
      if (Number(rows[0]?.got) !== 1)
        throw new LockTimeoutError(`Waited ${WAIT_SECONDS} s for the lock ${name}`)
      try {
        return await task()
      } finally {
        await holder.rawQuery('SELECT RELEASE_LOCK(?)', [name])
      }
    } finally {
      await holder.commit()
    }
  }
}
