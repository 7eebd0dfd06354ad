import { rpcError } from '#core/rpc/errors'

/**
 * Nested parameters arrive as a JSON string (`fieldValues={"12":"x"}`), as a
 * JSON object (JSON bodies), or in PHP bracket form (`fieldValues[12]=x`,
 * `rows[0]=5` -> {"0": "5"}). These helpers make all three the same.
 */
export function asObject(raw: unknown, name: string): Record<string, any> {
  if (raw === undefined || raw === null || raw === '') return {}
  if (typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, any>
  if (Array.isArray(raw))
    return Object.fromEntries(raw.map((value, index) => [String(index), value]))
  if (typeof raw === 'string') {
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
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
        return asList(JSON.parse(text), name)
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

export function asBool(raw: unknown, fallback: boolean): boolean {
  if (raw === undefined || raw === null || raw === '') return fallback
  if (typeof raw === 'boolean') return raw
  const text = String(raw).trim().toLowerCase()
  if (['1', 'true', 'on', 'yes'].includes(text)) return true
  if (['0', 'false', 'off', 'no'].includes(text)) return false
  return fallback
}

export function asInt(raw: unknown, name: string): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined
  const text = String(raw).trim()
  if (!/^-?\d+$/.test(text))
    throw rpcError('INVALID_PARAMETER', `Invalid parameter ${name}: not an integer`, {
      field: name,
    })
  return Number(text)
}

export function asIdList(raw: unknown, name: string): number[] {
  return asList(raw, name).map((item) => {
    const text = String(item).trim()
    if (!/^\d+$/.test(text))
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
