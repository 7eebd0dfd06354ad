/**
 * api.php's answer as JSON text: exactly JSON.stringify(answer), with the text of frozen parts
 * made once. JSON.stringify was the largest cost of a small call left (getUserInfo: 4 to 5 µs
 * of about 24 under load, most of it the 32 keys of userPrefs, which the serializer keeps per
 * user and sstamp and answers again and again).
 *
 * The envelope and the plain objects in it, down to DESCENT_DEPTH, are written here key by key
 * (in Object.keys order, the order JSON.stringify uses); every other value goes to
 * JSON.stringify as it is. A plain object that is deeply frozen, with data properties only, has
 * its text kept (by identity, weakly): it cannot change. Anything else is written every time.
 */
const DESCENT_DEPTH = 2

const frozenTexts = new WeakMap<object, string>()
/** Frozen objects found not to be deeply frozen (not looked at again). */
const notDeeplyFrozen = new WeakSet<object>()

/** Property names as JSON text, the same few names on every answer; emptied when full. */
const KEY_TEXTS = 10_000
const keyTexts = new Map<string, string>()

function keyText(key: string): string {
  let text = keyTexts.get(key)
  if (text === undefined) {
    if (keyTexts.size >= KEY_TEXTS) keyTexts.clear()
    text = JSON.stringify(key)
    keyTexts.set(key, text)
  }
  return text
}

/** What JSON.stringify escapes in a string: controls, `"`, `\\` and (lone or not) surrogates. */
// eslint-disable-next-line no-control-regex
const ESCAPED = /[\u0000-\u001f"\\\ud800-\udfff]/

type Plain = Record<string, unknown>

function isPlain(value: object): value is Plain {
  if (Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Frozen, with data properties only, and so are the objects it holds: its JSON cannot change. */
function isDeeplyFrozen(value: object, depth = 0): boolean {
  if (depth > 8 || !Object.isFrozen(value)) return false
  for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(value))) {
    if (!('value' in descriptor)) return false
    const inner = descriptor.value
    if (typeof inner === 'object' && inner !== null && !isDeeplyFrozen(inner, depth + 1))
      return false
  }
  return true
}

/**
 * JSON.stringify(value)'s text of a property's value, as SerializeJSONProperty makes it; undefined
 * when the property is left out (undefined, a function, a symbol).
 */
function valueText(value: unknown, key: string, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null) {
    // JSON.stringify of a primitive is a call into the runtime (about 0.1 µs): a string with
    // nothing to escape is itself in quotes, a finite number its String() text, a boolean its name.
    if (typeof value === 'string') return ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`
    if (typeof value === 'number' && Number.isFinite(value)) return String(value)
    if (typeof value === 'boolean') return value ? 'true' : 'false'
    return JSON.stringify(value) as string | undefined
  }
  if (value instanceof JsonText) return value.text
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    // JSON.stringify calls toJSON with the property's name, once: let it, on a one-key object.
    const wrapped = JSON.stringify({ [key]: value })
    return wrapped === '{}' ? undefined : wrapped.slice(keyText(key).length + 2, -1)
  }
  if (!isPlain(value)) return JSON.stringify(value)
  if (Object.isFrozen(value)) {
    const kept = frozenTexts.get(value)
    if (kept !== undefined) return kept
    if (!notDeeplyFrozen.has(value)) {
      if (isDeeplyFrozen(value)) {
        const text = JSON.stringify(value)
        frozenTexts.set(value, text)
        return text
      }
      notDeeplyFrozen.add(value)
    }
  }
  if (depth >= DESCENT_DEPTH) return JSON.stringify(value)
  return objectText(value, depth + 1)
}

function objectText(object: Plain, depth: number): string {
  let text = ''
  for (const key of Object.keys(object)) {
    const inner = valueText(object[key], key, depth)
    if (inner === undefined) continue
    text += `${text === '' ? '{' : ','}${keyText(key)}:${inner}`
  }
  return text === '' ? '{}' : `${text}}`
}

/**
 * Part of an answer a serializer wrote as JSON text itself (a page's cells: the tables plugin's
 * serializePageColumns): answerJson writes it as it is. Anything else that stringifies the
 * answer (a socket frame, MCP) reads it back through toJSON, so every answer has one text.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text)
  }
}

/**
 * `value` with each JsonText in it (in plain objects and arrays) read back as its value: an
 * answer as a client that parsed it reads it, for callers that run an operation in process
 * (transfer's LocalClient). Parts without one are the same objects.
 */
export function readJsonTexts<T>(value: T): T {
  if (value instanceof JsonText) return value.toJSON() as T
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const items = value.map((item) => readJsonTexts(item))
    return (items.some((item, index) => item !== value[index]) ? items : value) as T
  }
  if (!isPlain(value)) return value
  let copy: Plain | null = null
  for (const key of Object.keys(value)) {
    const inner = readJsonTexts(value[key])
    if (inner !== value[key]) (copy ??= { ...value })[key] = inner
  }
  return (copy ?? value) as T
}

/** JSON.stringify(value)'s text (undefined where it leaves the value out), for JsonText's makers. */
export function jsonOf(value: unknown): string | undefined {
  return valueText(value, '', DESCENT_DEPTH)
}

/**
 * JSON.stringify({ ...object, ...values })'s text where each of `texts` is a value's JSON text
 * already made: a key of `object` keeps its place, any other comes after, in `texts` order.
 */
export function objectJsonWith(object: Plain, texts: Record<string, string>): string {
  let text = ''
  for (const key of Object.keys(object)) {
    const inner = Object.hasOwn(texts, key) ? texts[key] : jsonOf(object[key])
    if (inner === undefined) continue
    text += `${text === '' ? '{' : ','}${keyText(key)}:${inner}`
  }
  for (const key of Object.keys(texts))
    if (!Object.hasOwn(object, key))
      text += `${text === '' ? '{' : ','}${keyText(key)}:${texts[key]}`
  return text === '' ? '{}' : `${text}}`
}

/** JSON.stringify(answer), the same text; throws where it throws (a BigInt, a cycle). */
export function answerJson(answer: unknown): string {
  return valueText(answer, '', 0) as string
}
