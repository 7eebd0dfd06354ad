import { rpcError } from '#core/rpc/errors'
import { flagValue } from '#core/rpc/wire'
import { parseBoundedJson } from '#core/rpc/nesting'

/**
 * Values nested inside an operation's parameters (a field's options, a
 * filter group, filterRowIds' members), read with the same forms as the
 * parameters themselves: a JSON string, a JSON value, or PHP bracket form
 * (`rows[0]=5` -> {"0": "5"}). Parameters themselves are read by the
 * validators' rules ('#core/rpc/wire': object(), list(), idList(), flag()).
 */
export function asObject(raw: unknown, name: string): Record<string, any> {
  if (raw === undefined || raw === null || raw === '') return {}
  if (typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, any>
  if (Array.isArray(raw))
    return Object.fromEntries(raw.map((value, index) => [String(index), value]))
  if (typeof raw === 'string') {
    let parsed: unknown
    try {
      parsed = parseBoundedJson(raw)
    } catch {
      throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: not a JSON object`, {
        field: name,
      })
    }
    if (parsed && typeof parsed === 'object') return asObject(parsed, name)
  }
  throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: not an object`, { field: name })
}

/** A list: JSON array, JSON string of an array, or bracket object {"0": a, "1": b} (in key order). */
export function asList(raw: unknown, name: string): any[] {
  if (raw === undefined || raw === null || raw === '') return []
  if (Array.isArray(raw)) return raw
  if (typeof raw === 'object') {
    return Object.entries(raw as Record<string, unknown>)
      .sort(([a], [b]) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : 0))
      .map(([, value]) => value)
  }
  if (typeof raw === 'string') {
    const text = raw.trim()
    if (text.startsWith('[') || text.startsWith('{')) {
      try {
        return asList(parseBoundedJson(text), name)
      } catch {
        throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: not a JSON list`, {
          field: name,
        })
      }
    }
    return text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '')
  }
  return [raw]
}

/**
 * A boolean nested inside a parameter (an option, a filter's flag), by the
 * one rule every entry point uses (flagValue of '#core/rpc/wire': true/false,
 * 1/0, on/off, yes/no, any case); `fallback` when absent or not a boolean word.
 */
export function flagOr(raw: unknown, fallback: boolean): boolean {
  return flagValue(raw) ?? fallback
}

export function asIdList(raw: unknown, name: string): number[] {
  return asList(raw, name).map((item) => {
    const text = String(item).trim()
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
      throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: "${text}" is not an id`, {
        field: name,
      })
    return Number(text)
  })
}

/** A server row id (digits). */
export function rowIdOf(raw: unknown, name = 'rowId'): number {
  const text = String(raw ?? '').trim()
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: "${text}" is not a row id`, {
      field: name,
    })
  return Number(text)
}
