import { NO_RESTRICTIONS, type SessionRestrictions } from '#models/api_session'
import type { Actor, OperationArea } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { flagValue } from '#core/rpc/wire'

const FLAGS = ['readonly', 'hideTables', 'hideMessages', 'hideEvents', 'internal'] as const

const truthy = (value: unknown) => flagValue(value) === true

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

/** What an entry point declares of itself: an operation, a socket type or a system message. */
export interface RestrictedAction {
  /** How the refusal names it (`sendMsg`, `This message`). */
  label: string
  writes: boolean
  area?: OperationArea
}

const bookText = (value: unknown) =>
  typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : ''

/**
 * What a restricted session may not do, checked before any operation or
 * socket message runs: write when read-only, use an area it hides, name a
 * book other than the one it is restricted to (b_c, b_o of the input).
 */
export function enforceRestrictions(
  action: RestrictedAction,
  actor: Actor,
  input: Record<string, unknown>
) {
  const restrictions = actor.restrictions
  if (restrictions.readonly && action.writes) {
    throw rpcError('READONLY_SESSION', `${action.label} writes, and this session is read-only`)
  }
  const area = action.area
  const hidden =
    (area === 'messages' && restrictions.hideMessages) ||
    (area === 'tables' && restrictions.hideTables) ||
    (area === 'events' && restrictions.hideEvents)
  if (hidden) throw rpcError('RESTRICTED_SESSION', `This session may not use ${area}`)
  if (restrictions.carnet_code) {
    const bc = bookText(input.b_c)
    const bo = bookText(input.b_o)
    if (
      (bc !== '' && bc !== restrictions.carnet_code) ||
      (bo !== '' && restrictions.carnet_owner && bo !== restrictions.carnet_owner)
    ) {
      throw rpcError('RESTRICTED_SESSION', 'This session is restricted to another book')
    }
  }
}
