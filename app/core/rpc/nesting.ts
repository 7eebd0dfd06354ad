/**
 * How deep a client's nested value may go. Real parameters nest a few levels
 * (a filter group holds filters, a row holds cells); a value nested deeper
 * is refused where it enters, before any recursive code (serializers,
 * JSON.stringify, filter compilers) could overflow the stack on it.
 */
export const MAX_NESTING = 32

/**
 * Readies a parsed JSON value a client sent, in one breadth-first walk (no recursion): answers
 * false when it nests deeper than `limit` levels (the caller refuses it whole), and removes, in
 * place, the keys named like Object.prototype's members (`toString`, `valueOf`, `__proto__`,
 * `constructor`…), as the form decoder drops them: an own `toString` that is not a function
 * makes String(value) throw, so code reading a client's value as text could not refuse it
 * properly. A removed key's value still counts for the depth. One walk, not a depth check and a
 * second walk dropping keys: a 1,000-row bulk write's rows are 5,000 objects and keys.
 */
export function acceptNested(value: unknown, limit = MAX_NESTING): boolean {
  let level: object[] = value !== null && typeof value === 'object' ? [value] : []
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > limit) return false
    const next: object[] = []
    for (const item of level) {
      if (Array.isArray(item)) {
        for (const inner of item) if (inner !== null && typeof inner === 'object') next.push(inner)
        continue
      }
      const record = item as Record<string, unknown>
      for (const key of Object.keys(record)) {
        const inner = record[key]
        if (inner !== null && typeof inner === 'object') next.push(inner)
        if (key in Object.prototype) delete record[key]
      }
    }
    level = next
  }
  return true
}

/**
 * JSON.parse for text a client sent: a value nested deeper than MAX_NESTING
 * throws a SyntaxError, as malformed JSON does, so every caller's "not JSON"
 * answer covers it. Keys named like Object.prototype's members are dropped.
 */
export function parseBoundedJson(text: string): unknown {
  const value = JSON.parse(text)
  if (!acceptNested(value)) throw new SyntaxError(`JSON nested deeper than ${MAX_NESTING} levels`)
  return value
}
