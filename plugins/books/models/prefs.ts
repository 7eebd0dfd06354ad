/**
 * Book preferences: the owner's (ownerPrefs, one per book) and each member's
 * (userPrefs). Stored as JSON; every key is answered with its spec type, so a
 * client always finds all keys with the right JSON type.
 */

type PrefKind = 'boolean' | 'integer' | 'string' | 'nullableString'

export const OWNER_PREF_KINDS: Record<string, PrefKind> = {
  oCoverColor: 'string',
  oCoverUseLastImg: 'boolean',
  oCoverImg: 'nullableString',
  oCoverType: 'string',
  authorizeMemberBroadcast: 'boolean',
  acceptExternalMsg: 'boolean',
  title: 'string',
  notifyMobileConfidential: 'boolean',
}

export const OWNER_PREF_DEFAULTS: Record<string, unknown> = {
  oCoverColor: '',
  oCoverUseLastImg: false,
  oCoverImg: null,
  oCoverType: '',
  authorizeMemberBroadcast: false,
  acceptExternalMsg: false,
  title: '',
  notifyMobileConfidential: false,
}

/** `syncWithHubic` is the live product's spelling of syncWithStorage: both are accepted and answered. */
export const USER_PREF_KINDS: Record<string, PrefKind> = {
  maxMsgsOffline: 'integer',
  syncWithStorage: 'boolean',
  uCoverLetOwnerDecide: 'boolean',
  uCoverColor: 'string',
  uCoverUseLastImg: 'boolean',
  uCoverImg: 'nullableString',
  uCoverType: 'string',
  inGlobalSearch: 'boolean',
  inGlobalTasks: 'boolean',
  notifyEmailCopy: 'boolean',
  notifySmsCopy: 'boolean',
  notifyMobile: 'boolean',
  notifyWhenMsgInArchivedBook: 'boolean',
}

export const DEFAULT_MAX_MSGS_OFFLINE = 500

export const USER_PREF_DEFAULTS: Record<string, unknown> = {
  maxMsgsOffline: DEFAULT_MAX_MSGS_OFFLINE,
  syncWithStorage: false,
  uCoverLetOwnerDecide: true,
  uCoverColor: '',
  uCoverUseLastImg: false,
  uCoverImg: null,
  uCoverType: '',
  inGlobalSearch: true,
  inGlobalTasks: true,
  notifyEmailCopy: false,
  notifySmsCopy: false,
  notifyMobile: true,
  notifyWhenMsgInArchivedBook: false,
}

const TRUE_WORDS = new Set(['1', 'true', 'on', 'yes'])
const FALSE_WORDS = new Set(['0', 'false', 'off', 'no', ''])

/**
 * A value given by a client (a string from a form, or a JSON value) as the
 * pref's type; undefined when it cannot be read as that type.
 */
export function coercePref(kind: PrefKind, value: unknown): unknown {
  // An object or array is no pref value (and bracket form's objects cannot even be converted).
  if (value !== null && typeof value === 'object') return undefined
  switch (kind) {
    case 'boolean': {
      if (typeof value === 'boolean') return value
      if (typeof value === 'number') return value !== 0
      const word = String(value ?? '')
        .trim()
        .toLowerCase()
      if (TRUE_WORDS.has(word)) return true
      if (FALSE_WORDS.has(word)) return false
      return undefined
    }
    case 'integer': {
      const number = typeof value === 'number' ? value : Number(String(value ?? '').trim())
      return Number.isInteger(number) && String(value ?? '').trim() !== '' ? number : undefined
    }
    case 'string':
      return value === null || value === undefined ? '' : String(value)
    case 'nullableString':
      return value === null || value === undefined || value === '' ? null : String(value)
  }
}

/** Stored prefs completed with defaults, each typed as the spec says. */
export function typedPrefs(
  kinds: Record<string, PrefKind>,
  defaults: Record<string, unknown>,
  stored: Record<string, unknown> | null
) {
  const result: Record<string, unknown> = {}
  for (const [key, kind] of Object.entries(kinds)) {
    const value = stored && key in stored ? coercePref(kind, stored[key]) : undefined
    result[key] = value === undefined ? defaults[key] : value
  }
  return result
}

/**
 * Picks the known keys out of a client's changes and types them; an unknown
 * key or a value of the wrong type is reported as `invalid`.
 */
export function readPrefChanges(kinds: Record<string, PrefKind>, changes: Record<string, unknown>) {
  const valid: Record<string, unknown> = {}
  const invalid: string[] = []
  for (const [rawKey, value] of Object.entries(changes)) {
    const key = rawKey === 'syncWithHubic' && kinds === USER_PREF_KINDS ? 'syncWithStorage' : rawKey
    const kind = kinds[key]
    if (!kind) {
      invalid.push(rawKey)
      continue
    }
    const typed = coercePref(kind, value)
    if (typed === undefined) invalid.push(rawKey)
    else valid[key] = typed
  }
  return { valid, invalid }
}

export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined || value === '') return fallback
  if (typeof value !== 'string') return value as T
  try {
    return JSON.parse(value) as T
  } catch {
    return fallback
  }
}
