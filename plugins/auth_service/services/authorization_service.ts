import { inject } from '@adonisjs/core'
import { Database } from '@adonisjs/lucid/database'
import { Clock } from './clock.js'
import { AuthConfig } from '../config.js'
import { opaqueToken } from './secrets.js'
import { authError } from '../errors.js'

export type ResponseMode = 'query' | 'form_post'

export interface AuthClient {
  clientId: string
  name: string
  redirectUris: string[]
}

export interface AuthorizationRequest {
  id: number
  publicId: string
  clientId: string
  redirectUri: string
  state: string | null
  nonce: string | null
  responseMode: ResponseMode
  passThrough: Record<string, string>
  expiresAt: number
  consumedAt: number | null
}

/** Parameters the authorization request itself uses; every other one is passed through. */
const OWN_PARAMETERS = new Set(['client_id', 'redirect_uri', 'state', 'nonce', 'response_mode'])

const asText = (value: unknown) =>
  value === undefined || value === null
    ? ''
    : typeof value === 'string'
      ? value
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)

/**
 * OIDC-style bootstrap: registered clients with their exact redirect URIs,
 * and authorization requests (state, nonce, response mode, pass-through
 * parameters) that a login completes once, before they expire.
 */
@inject()
export class AuthorizationService {
  private ttlSeconds: number

  constructor(
    private db: Database,
    private clock: Clock,
    config: AuthConfig
  ) {
    this.ttlSeconds = config.ttl.requestSeconds
  }

  async registerClient(client: AuthClient) {
    const values = { name: client.name, redirect_uris: JSON.stringify(client.redirectUris) }
    const existing = await this.db.from('auth_clients').where('client_id', client.clientId).first()
    if (existing)
      await this.db.from('auth_clients').where('client_id', client.clientId).update(values)
    else
      await this.db
        .table('auth_clients')
        .insert({ client_id: client.clientId, ...values, created_at: this.clock.now() })
  }

  async removeClient(clientId: string) {
    return Number(await this.db.from('auth_clients').where('client_id', clientId).delete()) > 0
  }

  async listClients(): Promise<AuthClient[]> {
    const rows = await this.db.from('auth_clients').orderBy('client_id')
    return rows.map((row) => this.clientFrom(row))
  }

  async findClient(clientId: string): Promise<AuthClient | null> {
    const row = await this.db.from('auth_clients').where('client_id', clientId).first()
    return row ? this.clientFrom(row) : null
  }

  /** Validates and stores an authorization request; `params` is everything the client sent. */
  async start(params: Record<string, unknown>) {
    const clientId = asText(params.client_id).trim()
    const redirectUri = asText(params.redirect_uri).trim()
    const responseMode = asText(params.response_mode).trim() || 'query'
    const client = clientId ? await this.findClient(clientId) : null
    if (!client) throw authError('invalid_client', 'client_id names no registered client')
    if (!client.redirectUris.includes(redirectUri)) {
      throw authError('invalid_redirect_uri', 'redirect_uri is not registered for this client')
    }
    if (responseMode !== 'query' && responseMode !== 'form_post') {
      throw authError('invalid_request', 'response_mode must be query or form_post')
    }
    const passThrough: Record<string, string> = {}
    for (const [key, value] of Object.entries(params)) {
      if (!OWN_PARAMETERS.has(key) && value !== undefined) passThrough[key] = asText(value)
    }
    const now = this.clock.now()
    const publicId = opaqueToken('ar_')
    await this.db.table('auth_requests').insert({
      public_id: publicId,
      client_id: client.clientId,
      redirect_uri: redirectUri,
      state: asText(params.state) || null,
      nonce: asText(params.nonce) || null,
      response_mode: responseMode,
      pass_through: JSON.stringify(passThrough),
      created_at: now,
      expires_at: now + this.ttlSeconds * 1000,
    })
    return { requestId: publicId, expiresIn: this.ttlSeconds, client, passThrough }
  }

  async findByPublicId(publicId: string): Promise<AuthorizationRequest | null> {
    const row = await this.db.from('auth_requests').where('public_id', publicId).first()
    return row ? this.requestFrom(row) : null
  }

  async findById(id: number): Promise<AuthorizationRequest | null> {
    const row = await this.db.from('auth_requests').where('id', id).first()
    return row ? this.requestFrom(row) : null
  }

  /** An authorization request still usable now, or the 7.B error. */
  assertUsable(request: AuthorizationRequest | null): asserts request is AuthorizationRequest {
    if (!request || request.consumedAt !== null || request.expiresAt <= this.clock.now()) {
      throw authError(
        'authorization_request_expired',
        'The authorization request has expired; start the sign-in again from the application'
      )
    }
  }

  /** Marks the request used; false when another login completed it first. */
  async consume(request: AuthorizationRequest): Promise<boolean> {
    const updated = await this.db
      .from('auth_requests')
      .where('id', request.id)
      .whereNull('consumed_at')
      .update({ consumed_at: this.clock.now() })
    return Number(updated) === 1
  }

  private clientFrom(row: any): AuthClient {
    let redirectUris: string[] = []
    try {
      redirectUris = JSON.parse(row.redirect_uris)
    } catch {}
    return { clientId: row.client_id, name: row.name, redirectUris }
  }

  private requestFrom(row: any): AuthorizationRequest {
    let passThrough: Record<string, string> = {}
    try {
      passThrough = JSON.parse(row.pass_through)
    } catch {}
    return {
      id: Number(row.id),
      publicId: row.public_id,
      clientId: row.client_id,
      redirectUri: row.redirect_uri,
      state: row.state ?? null,
      nonce: row.nonce ?? null,
      responseMode: row.response_mode === 'form_post' ? 'form_post' : 'query',
      passThrough,
      expiresAt: Number(row.expires_at),
      consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
    }
  }
}
