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

/** A JSON list held as text or as an array (a message's medias, a file cell's value); anything else is empty. */
export function parseList(value: unknown): any[] {
  if (Array.isArray(value)) return [...value]
  if (typeof value !== 'string' || value.trim() === '') return []
  try {
    const parsed = JSON.parse(value)
    return Array.isArray(parsed) ? parsed : []
  } catch {
    return []
  }
}
