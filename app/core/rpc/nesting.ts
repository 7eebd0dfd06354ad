/**
 * How deep a client's nested value may go. Real parameters nest a few levels
 * (a filter group holds filters, a row holds cells); a value nested deeper
 * is refused where it enters, before any recursive code (serializers,
 * JSON.stringify, filter compilers) could overflow the stack on it.
 */
export const MAX_NESTING = 32

/** Whether a parsed JSON value nests deeper than `limit` levels (breadth first, no recursion). */
export function exceedsNesting(value: unknown, limit = MAX_NESTING): boolean {
  let level: unknown[] = [value]
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > limit) return true
    const next: unknown[] = []
    for (const item of level) {
      if (item === null || typeof item !== 'object') continue
      for (const inner of Object.values(item)) {
        if (inner !== null && typeof inner === 'object') next.push(inner)
      }
    }
    level = next
  }
  return false
}

/**
 * JSON.parse for text a client sent: a value nested deeper than MAX_NESTING
 * throws a SyntaxError, as malformed JSON does, so every caller's "not JSON"
 * answer covers it. Keys named like Object.prototype's members are dropped.
 */
export function parseBoundedJson(text: string): unknown {
  const value = JSON.parse(text)
  if (exceedsNesting(value)) throw new SyntaxError(`JSON nested deeper than ${MAX_NESTING} levels`)
  return dropPrototypeKeys(value)
}

/**
 * Removes (in place) the keys named like Object.prototype's members
 * (`toString`, `valueOf`, `__proto__`, `constructor`…) from a parsed JSON
 * value, as the form decoder drops them: an own `toString` that is not a
 * function makes String(value) throw, so code reading a client's value as
 * text could not refuse it properly. Call it once exceedsNesting has passed
 * (it recurses; a JSON.parse reviver would recurse before the check).
 */
export function dropPrototypeKeys<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  for (const key of Object.keys(value)) {
    if (key in Object.prototype) delete (value as Record<string, unknown>)[key]
    else dropPrototypeKeys((value as Record<string, unknown>)[key])
  }
  return value
}
