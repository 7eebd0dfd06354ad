import { webcrypto } from 'node:crypto'
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose'
import type { JwtKey } from '../config.js'
import type { Clock } from './clock.js'

/** What an access token says: the user (uuid and internal id), its session, and OIDC extras. */
export interface AccessClaims {
  /** The user's public uuid (`user.id` on the wire). */
  sub: string
  /** The auth session (refresh-token chain) this token belongs to. */
  sid: string
  /** Internal user id: lets a bearer check find the user's cached state without a lookup. */
  uid: number
  /** The user's code (u_c of the request API). */
  u_c: string
  email?: string | null
  nonce?: string
  aud?: string
}

export interface VerifiedAccess extends AccessClaims {
  exp: number
  iat: number
  kid: string
}

/** Verified tokens remembered at most (a few MB); the oldest are forgotten first. */
const VERIFIED_CACHE_SIZE = 20_000

/**
 * Signs and verifies access tokens (HS256 JWT with a `kid` header). Several
 * keys may be configured: the first signs, all verify, so keys rotate without
 * logging anybody out.
 *
 * A client sends the same access token on every request of its lifetime, and
 * a token's signature cannot become valid or invalid later: a token already
 * verified is remembered (keyed by its full text) until it expires, which
 * spares the HMAC and its thread-pool round trip on the bearer hot path.
 * Whether its session is still active is checked on every request, elsewhere.
 */
export class TokenService {
  private keys = new Map<string, webcrypto.CryptoKey>()
  private signingKid: string
  private verified = new Map<string, VerifiedAccess>()

  constructor(
    private jwtKeys: JwtKey[],
    private issuer: string,
    private ttlSeconds: number,
    private clock: Clock
  ) {
    if (jwtKeys.length === 0) throw new Error('The auth service needs at least one JWT key')
    this.signingKid = jwtKeys[0].kid
  }

  /** Imports the keys once: jose would otherwise import raw bytes on every call. */
  async init() {
    for (const { kid, secret } of this.jwtKeys) {
      const key = await webcrypto.subtle.importKey(
        'raw',
        secret,
        { name: 'HMAC', hash: 'SHA-256' },
        false,
        ['sign', 'verify']
      )
      this.keys.set(kid, key)
    }
    return this
  }

  get accessTtl() {
    return this.ttlSeconds
  }

  async sign(claims: AccessClaims): Promise<{ jwt: string; expiresIn: number }> {
    const iat = this.clock.nowSeconds()
    const { sub, aud, ...rest } = claims
    const builder = new SignJWT({ ...rest })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: this.signingKid })
      .setSubject(sub)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
    if (aud) builder.setAudience(aud)
    return { jwt: await builder.sign(this.keys.get(this.signingKid)!), expiresIn: this.ttlSeconds }
  }

  /** The claims of a valid token, or null (bad signature, unknown kid, expired, malformed). */
  async verify(token: string): Promise<VerifiedAccess | null> {
    const known = this.verified.get(token)
    if (known) {
      if (known.exp * 1000 > this.clock.now()) return known
      this.verified.delete(token)
    }
    const claims = await this.verifySignature(token)
    if (claims) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE)
        this.verified.delete(this.verified.keys().next().value!)
      this.verified.set(token, claims)
    }
    return claims
  }

  private async verifySignature(token: string): Promise<VerifiedAccess | null> {
    try {
      const { payload, protectedHeader } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid ? this.keys.get(header.kid) : undefined
          if (!key) throw new joseErrors.JWKSNoMatchingKey()
          return key
        },
        { algorithms: ['HS256'], issuer: this.issuer, currentDate: new Date(this.clock.now()) }
      )
      if (
        typeof payload.sub !== 'string' ||
        typeof payload.sid !== 'string' ||
        typeof payload.uid !== 'number'
      )
        return null
      return {
        sub: payload.sub,
        sid: payload.sid,
        uid: payload.uid,
        u_c: String(payload.u_c ?? ''),
        email: (payload.email as string | null | undefined) ?? null,
        nonce: payload.nonce as string | undefined,
        aud: typeof payload.aud === 'string' ? payload.aud : undefined,
        exp: payload.exp!,
        iat: payload.iat!,
        kid: protectedHeader.kid!,
      }
    } catch {
      return null
    }
  }
}
