type Row = Record<string, unknown>

const sameValue = (a: unknown, b: unknown) =>
  a === b ||
  (a instanceof Date && b instanceof Date && a.getTime() === b.getTime()) ||
  (a !== null &&
    b !== null &&
    typeof a === 'object' &&
    typeof b === 'object' &&
    JSON.stringify(a) === JSON.stringify(b))

function sameRow(a: Row, b: Row) {
  if (a === b) return true
  for (const key in b) if (!sameValue(a[key], b[key])) return false
  return true
}

/**
 * Hydrated Lucid models by key, reused while their row is unchanged.
 *
 * Every authenticated request reads its session and user rows (so a
 * revocation or an edit is seen at once, on every instance), but turning a
 * row into a model — luxon parsing each date column — cost more than reading
 * it. The row is still read every time; only an identical row gets the model
 * made from it before. Callers that change a model save it, which changes the
 * row, so the next read hydrates afresh.
 */
export class HydrationCache<Model> {
  private entries = new Map<unknown, { row: Row; model: Model }>()

  constructor(
    private hydrate: (row: Row) => Model,
    private maxEntries = 10_000
  ) {}

  model(key: unknown, row: Row): Model {
    const cached = this.entries.get(key)
    if (cached && sameRow(cached.row, row)) return cached.model
    const model = this.hydrate(row)
    if (!cached && this.entries.size >= this.maxEntries) {
      // Oldest first: a Map iterates in insertion order.
      this.entries.delete(this.entries.keys().next().value)
    }
    this.entries.set(key, { row, model })
    return model
  }
}
