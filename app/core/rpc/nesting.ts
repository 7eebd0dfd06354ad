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
 * answer covers it.
 */
export function parseBoundedJson(text: string): unknown {
  const value = JSON.parse(text, withoutPrototypeKeys)
  if (exceedsNesting(value)) throw new SyntaxError(`JSON nested deeper than ${MAX_NESTING} levels`)
  return value
}

/**
 * A JSON.parse reviver that drops keys named like Object.prototype's members
 * (`toString`, `valueOf`, `__proto__`, `constructor`…), as the form decoder
 * does: an own `toString` that is not a function makes String(value) throw,
 * so code reading a client's value as text could not refuse it properly.
 */
export function withoutPrototypeKeys(key: string, value: unknown) {
  return key in Object.prototype ? undefined : value
}
