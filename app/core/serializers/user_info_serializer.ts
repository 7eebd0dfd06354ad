import type User from '#models/user'
import { DEFAULT_COLORS, DEFAULT_RIGHTS } from '#core/user_defaults'

/** userPrefs keys that are not strings on the wire (2.3); every other key is a string. */
const BOOLEAN_PREFS = new Set(['slashd', 'openGrand', 'syncWithStorage', 'syncWithHubic'])
const INTEGER_PREFS = new Set(['nbCol'])

/** Every userPrefs key of the spec, so a client always finds all of them. */
const PREF_KEYS = [
  'mail1',
  'mail1_toConfirm',
  'mob1',
  'sex',
  'country',
  'fname',
  'lname',
  'lang',
  'UCREATEDON',
  'birthd',
  'mail2',
  'mail2_toConfirm',
  'mob2',
  'address',
  'zip',
  'city',
  'cie',
  'vatn',
  'account',
  'until',
  'slashd',
  'regiondf',
  'sdate',
  'method',
  'openGrand',
  'NotifMobile',
  'nbCol',
  'lastConnection',
  'secondsSincePreviousConnection',
  'tz',
  'syncWithStorage',
]

function typedPref(key: string, value: unknown) {
  if (BOOLEAN_PREFS.has(key))
    return value === true || value === 'true' || value === '1' || value === 1
  if (INTEGER_PREFS.has(key)) {
    const number = Number.parseInt(String(value ?? ''), 10)
    return Number.isFinite(number) ? number : 0
  }
  return value === null || value === undefined ? '' : String(value)
}

export function serializeUserPrefs(user: User) {
  const stored = user.prefs ?? {}
  const derived: Record<string, unknown> = {
    mail1: user.email ?? '',
    mob1: user.phone ?? '',
    fname: user.firstName,
    lname: user.lastName,
    lang: stored.lang ?? 'en',
    tz: stored.tz ?? 'UTC',
    UCREATEDON: user.createdAt?.toISODate() ?? '',
    lastConnection: user.lastConnectionAt?.toUnixInteger() ?? '',
    secondsSincePreviousConnection:
      user.lastConnectionAt && user.previousConnectionAt
        ? Math.round(user.lastConnectionAt.diff(user.previousConnectionAt, 'seconds').seconds)
        : '',
  }
  const prefs: Record<string, unknown> = {}
  for (const key of PREF_KEYS)
    prefs[key] = typedPref(key, key in derived ? derived[key] : stored[key])
  // The live product spells syncWithStorage as syncWithHubic: emit both.
  prefs.syncWithHubic = prefs.syncWithStorage
  return prefs
}

/**
 * The user's own part of userInfo, per model and sstamp: every change to a
 * user bumps its sstamp (getUserInfo's delta rule depends on it), and models
 * are reused between requests while their row is unchanged. Its objects are
 * answered again and again, so they are frozen: api.php then writes their JSON
 * text once (app/core/rpc/answer_json.ts).
 */
const ownParts = new WeakMap<User, { sstamp: number; part: ReturnType<typeof ownPart> }>()

function ownPart(user: User) {
  return {
    u_c: user.code,
    userPrefs: Object.freeze(serializeUserPrefs(user)),
    rights: Object.freeze({ ...DEFAULT_RIGHTS, admin: user.isAdmin, ...user.rights }),
    colors: Object.freeze({ ...DEFAULT_COLORS, ...user.colors }),
    projectID: Number(user.projectId),
  }
}

/**
 * The whole userInfo last answered per model, with what it was made from: a getUserInfo of an
 * unchanged user with the same contributed fields answers the same frozen object again, whose
 * JSON text api.php then writes once (answer_json.ts), not a new object of the same fields.
 */
const answered = new WeakMap<
  User,
  {
    sstamp: number
    uimgStamp: number
    firstTime: boolean
    contributed: Record<string, unknown>
    info: Readonly<Record<string, unknown>>
  }
>()

/** Same own keys, in the same order, with the same values (Object.is). */
function sameFields(a: Record<string, unknown>, b: Record<string, unknown>) {
  const keys = Object.keys(a)
  const others = Object.keys(b)
  if (keys.length !== others.length) return false
  for (let i = 0; i < keys.length; i++)
    if (keys[i] !== others[i] || !Object.is(a[keys[i]], b[keys[i]])) return false
  return true
}

/**
 * getUserInfo's `userInfo` (spec 2.3), with the fields plugins contribute (nbBooks, ...). Frozen
 * (not deeply: a contributed object stays as it was given); callers must not change it.
 */
export function serializeUserInfo(user: User, contributed: Record<string, unknown>) {
  const sstamp = Number(user.sstamp)
  const uimgStamp = Number(user.uimgStamp)
  const firstTime = user.previousConnectionAt === null
  const last = answered.get(user)
  if (
    last &&
    last.sstamp === sstamp &&
    Object.is(last.uimgStamp, uimgStamp) &&
    last.firstTime === firstTime &&
    sameFields(last.contributed, contributed)
  )
    return last.info
  let cached = ownParts.get(user)
  if (!cached || cached.sstamp !== sstamp) {
    cached = { sstamp, part: ownPart(user) }
    ownParts.set(user, cached)
  }
  const info = Object.freeze({
    firstTime,
    uimgStamp,
    sstamp,
    nbBooks: 0,
    ...contributed,
    ...cached.part,
  })
  answered.set(user, { sstamp, uimgStamp, firstTime, contributed: { ...contributed }, info })
  return info
}
