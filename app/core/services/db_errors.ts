/** Database errors that a retry can cure: deadlocks, lock wait timeouts, a busy SQLite file. */
export function isTransientDbError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code
  return (
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_BUSY_SNAPSHOT' ||
    code === 'SQLITE_LOCKED'
  )
}

/** A unique-key violation (a concurrent insert of the same natural key). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code
  return (
    code === 'ER_DUP_ENTRY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  )
}

/**
 * A statement naming a column the table does not have (any more): MySQL's ER_BAD_FIELD_ERROR,
 * SQLite's "no such column" (SQLITE_ERROR, told apart by its message).
 */
export function isUnknownColumn(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string }
  if (code === 'ER_BAD_FIELD_ERROR') return true
  return (
    code === 'SQLITE_ERROR' && typeof message === 'string' && message.startsWith('no such column')
  )
}
