import { createHash, randomInt } from 'node:crypto'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/**
 * A new opaque key in the shape real clients know: 7 groups of 4 alphanumerics
 * joined by dashes (about 166 bits of randomness).
 */
export function generateKey(groups = 7): string {
  const parts: string[] = []
  for (let group = 0; group < groups; group++) {
    let part = ''
    for (let index = 0; index < 4; index++) part += ALPHABET[randomInt(ALPHABET.length)]
    parts.push(part)
  }
  return parts.join('-')
}

/**
 * Keys are stored as SHA-256 digests. They carry enough entropy that a slow
 * password hash adds nothing, and lookups stay a single indexed equality.
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}
