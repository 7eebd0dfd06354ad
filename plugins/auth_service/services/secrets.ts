import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/** An opaque bearer secret (setup tokens, refresh tokens, request ids): 256 random bits. */
export function opaqueToken(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`
}

/** Tokens are stored as SHA-256 digests: they carry 256 bits, a slow hash adds nothing. */
export function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * AES-256-GCM for secrets kept at rest (TOTP seeds). The text form is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url; tampering fails the tag check.
 */
export class SecretBox {
  constructor(private key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key')
  }

  seal(plain: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.')
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.')
    if (version !== 'v1' || !iv || !tag || body === undefined)
      throw new Error('Unrecognised sealed secret')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8')
  }
}
