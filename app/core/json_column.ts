/**
 * Lucid column options for JSON kept in a TEXT column (the same on SQLite and
 * MySQL). An unreadable value reads as the fallback instead of failing a request.
 */
export function jsonColumn<T>(fallback: () => T) {
  return {
    prepare: (value: T | null) =>
      value === null || value === undefined ? null : JSON.stringify(value),
    consume: (value: unknown): T => {
      if (value === null || value === undefined || value === '') return fallback()
      if (typeof value !== 'string') return value as T
      try {
        return JSON.parse(value) as T
      } catch {
        return fallback()
      }
    },
  }
}
