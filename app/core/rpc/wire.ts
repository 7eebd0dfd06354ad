import vine, { errors as vineErrors } from '@vinejs/vine'
import type { VineValidator } from '@vinejs/vine'
import { rpcError, type ErrorCode } from './errors.js'
import { acceptNested } from './nesting.js'

/**
 * Wire values as real clients send them, and the one set of VineJS rules that
 * reads them: api.php parameters (every leaf a string, or JSON values in a JSON
 * body) and socket frames (JSON values) go through the same rules, so the
 * same input gets the same verdict on both entry points. An empty string
 * means "not given" for optional values (PHP clients send `sstamp=`).
 */
const emptyAsMissing = (value: unknown) => (value === '' || value === null ? undefined : value)

const FLAG_WORDS: Record<string, boolean> = {
  'true': true,
  '1': true,
  'on': true,
  'yes': true,
  'false': false,
  '0': false,
  'off': false,
  'no': false,
}

/**
 * A boolean as clients send it: JSON true/false, 1/0, or true/false, on/off,
 * yes/no, 1/0 as text in any case. Undefined when absent, null when it is
 * none of these.
 */
export function flagValue(value: unknown): boolean | undefined | null {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value === 'boolean') return value
  if (value === 1 || value === 0) return value === 1
  if (typeof value === 'string') return FLAG_WORDS[value.trim().toLowerCase()] ?? null
  return null
}

/** A boolean (see flagValue); anything else (2, "maybe", an array) is refused. */
export const flag = () =>
  vine.boolean({ strict: true }).parse((value) => {
    const parsed = flagValue(value)
    return parsed === null ? value : parsed
  })

/** A number as digits (an optional sign, an optional fraction), as api.php parameters carry it. */
const DECIMAL = /^-?\d+(\.\d+)?$/

/**
 * A number as clients send it: a JSON number, or its decimal digits as text
 * (api.php parameters are text; surrounding blanks are ignored). Empty or
 * blank text is "not given". Anything else (hex, exponents, booleans, arrays,
 * objects, NaN) is left for the strict number rule to refuse.
 */
function numberValue(value: unknown): unknown {
  if (typeof value !== 'string') return value === null ? undefined : value
  const trimmed = value.trim()
  if (trimmed === '') return undefined
  return DECIMAL.test(trimmed) ? Number(trimmed) : value
}

/** An integer given as digits or a JSON number, within the safe integer range. */
export const int = () =>
  vine
    .number({ strict: true })
    .withoutDecimals()
    .range([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER])
    .parse(numberValue)

/** A stamp, id, count or offset: a non-negative safe integer (digits or a JSON number). */
export const stamp = () =>
  vine
    .number({ strict: true })
    .withoutDecimals()
    .range([0, Number.MAX_SAFE_INTEGER])
    .parse(numberValue)

/** A JSON number or boolean read as its text (socket frames carry JSON values, api.php text). */
const scalarText = (value: unknown) =>
  typeof value === 'number' || typeof value === 'boolean' ? String(value) : value

/**
 * A required, non-blank text, trimmed. Empty or blank text is "not given"
 * (MISSING_PARAMETER when required); a JSON number or boolean is read as its
 * text; an array or object is refused.
 */
export const text = () =>
  vine
    .string()
    .trim()
    .parse((value) => {
      const read = scalarText(value)
      return typeof read === 'string' && read.trim() === '' ? undefined : read
    })

/** Text as it is (not trimmed, empty allowed); a JSON number or boolean is read as its text. */
export const looseText = () => vine.string().parse(scalarText)

/** Whether a parsed value is a plain object (not an array, not null). */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** What a JSON text nested too deep reads as: no rule accepts it, so its parameter is refused. */
const TOO_DEEP = Symbol('nested too deep')

/**
 * The value of a nested parameter: a JSON string (`fieldValues={"12":"x"}`),
 * a JSON value (JSON bodies, socket frames) or the object PHP bracket form
 * makes (`fieldValues[12]=x`). Text that is not JSON is returned as it is.
 */
function nestedValue(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const trimmed = value.trim()
  if (trimmed === '') return undefined
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(trimmed)
    } catch {
      return value
    }
    return acceptNested(parsed) ? parsed : TOO_DEEP
  }
  return value
}

/** Bracket form makes `rows[0]=a&rows[1]=b` an object {"0": a, "1": b}: its values in key order. */
function bracketList(value: Record<string, unknown>): unknown[] {
  return Object.entries(value)
    .sort(([a], [b]) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : 0))
    .map(([, item]) => item)
}

/**
 * An object: a JSON object string, a JSON object, or bracket form. A list in
 * bracket or JSON form becomes an object keyed by position.
 */
export const object = () =>
  vine.record(vine.any()).parse((value) => {
    const nested = emptyAsMissing(nestedValue(value))
    if (Array.isArray(nested))
      return Object.fromEntries(nested.map((item, index) => [String(index), item]))
    return nested
  })

/** Any list form (see listOf) as an array. */
function toList(value: unknown): unknown {
  const nested = emptyAsMissing(nestedValue(value))
  if (nested === undefined || nested === TOO_DEEP || Array.isArray(nested)) return nested
  if (isPlainObject(nested)) return bracketList(nested)
  if (typeof nested === 'string')
    return nested
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
  return [nested]
}

/**
 * A list whose items follow `item`: a JSON array (or its text), bracket form
 * (`ids[0]=1&ids[1]=2`), a comma-separated text (`1,2,3`) or a single scalar.
 */
export const listOf = <Schema extends Parameters<typeof vine.array>[0]>(item: Schema) =>
  vine.array(item).parse(toList)

/** A list of anything, in any list form. */
export const list = () => listOf(vine.any())

/** A list of ids (non-negative integers), in any list form. */
export const idList = () => listOf(stamp())

interface VineMessage {
  field: string
  rule: string
  message: string
}

/**
 * Validates wire input with a compiled VineJS schema. A validation failure
 * becomes the documented nok: MISSING_PARAMETER for an absent required
 * value, INVALID_PARAMETER (naming the field) otherwise.
 */
export async function validateWire<T>(
  validator: VineValidator<any, any>,
  data: unknown
): Promise<T> {
  try {
    return await validator.validate(data)
  } catch (error) {
    if (error instanceof vineErrors.E_VALIDATION_ERROR) {
      const first = (error.messages as VineMessage[])[0]
      const code: ErrorCode = first.rule === 'required' ? 'MISSING_PARAMETER' : 'INVALID_PARAMETER'
      const message =
        code === 'MISSING_PARAMETER'
          ? `Missing parameter: ${first.field}`
          : `Invalid parameter ${first.field}: ${first.message}`
      throw rpcError(code, message, { field: first.field })
    }
    throw error
  }
}
