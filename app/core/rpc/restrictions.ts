import { NO_RESTRICTIONS, type SessionRestrictions } from '#models/api_session'
import { rpcError } from './errors.js'

const FLAGS = ['readonly', 'hideTables', 'hideMessages', 'hideEvents', 'internal'] as const

const truthy = (value: unknown) =>
  value === true ||
  (typeof value === 'string' && ['1', 'true', 'on', 'yes'].includes(value.trim().toLowerCase()))

const optionalText = (value: unknown) =>
  typeof value === 'string' && value.trim() !== ''
    ? value.trim()
    : typeof value === 'number'
      ? String(value)
      : null

/**
 * createSesskey's `restrictions`: empty (none), a JSON object, the same object
 * in bracket form (`restrictions[readonly]=1`), or a comma-separated list of
 * flag names (`readonly,hideTables`).
 */
export function parseRestrictions(raw: unknown): SessionRestrictions {
  if (raw === undefined || raw === null || raw === '') return { ...NO_RESTRICTIONS }
  let source: Record<string, unknown>
  if (typeof raw === 'string') {
    const trimmed = raw.trim()
    if (trimmed.startsWith('{')) {
      try {
        source = JSON.parse(trimmed)
      } catch {
        throw rpcError('INVALID_PARAMETER', 'Invalid parameter restrictions: not valid JSON')
      }
    } else {
      source = Object.fromEntries(trimmed.split(',').map((flag) => [flag.trim(), true]))
    }
  } else if (typeof raw === 'object' && !Array.isArray(raw)) {
    source = raw as Record<string, unknown>
  } else {
    throw rpcError('INVALID_PARAMETER', 'Invalid parameter restrictions: expected an object')
  }

  const restrictions: SessionRestrictions = { ...NO_RESTRICTIONS }
  for (const flag of FLAGS) restrictions[flag] = truthy(source[flag])
  restrictions.carnet_code = optionalText(source.carnet_code)
  restrictions.carnet_owner = optionalText(source.carnet_owner)
  if (restrictions.carnet_owner && !restrictions.carnet_code) {
    throw rpcError(
      'INVALID_PARAMETER',
      'Invalid parameter restrictions: carnet_owner needs carnet_code'
    )
  }
  return restrictions
}
