import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 24 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

/**
 * The Standard Webhooks signature of one attempt: `v1,` + base64 of
 * HMAC-SHA256, keyed with the secret's decoded bytes, over
 * `${id}.${timestamp}.${body}`. Several secrets (during a rotation) give
 * several signatures separated by spaces, as the specification allows.
 */
export function signatureHeader(
  secrets: string[],
  id: string,
  timestamp: number,
  body: string
): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
      const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
      return `v1,${mac}`
    })
    .join(' ')
}

/** Checks a header against a secret (used by the console's "verify" hint and the tests' own check). */
export function verifies(
  secret: string,
  header: string,
  id: string,
  timestamp: number,
  body: string
) {
  const expected = Buffer.from(signatureHeader([secret], id, timestamp, body))
  return header.split(' ').some((part) => {
    const given = Buffer.from(part)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
