const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** A random (version 4, RFC 9562 variant) uuid: the only client uuid the open /dbi forms accept. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The client's uuid for a file, in canonical (lower-case) form; undefined when it is not a uuid. */
export function clientUuid(value: string | undefined) {
  const uuid = String(value ?? '')
    .trim()
    .toLowerCase()
  return UUID_SHAPE.test(uuid) ? uuid : undefined
}

/**
 * Whether a uuid may be the key of the open forms (in, dn, odn): a random
 * (version 4) one. Server-made uuids are; a client's is kept in any version,
 * but a guessable one (time-based, name-based) opens only the session-bound
 * forms. Uniqueness is the store's: a uuid already used is refused.
 */
export const isOpenUuid = (uuid: string) => UUID_V4.test(uuid)
