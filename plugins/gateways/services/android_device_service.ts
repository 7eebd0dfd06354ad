import { randomBytes, timingSafeEqual } from 'node:crypto'
import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import { hashKey } from '#core/auth/keys'
import { dbTimestamp } from '#core/db_time'
import gatewaysConfig from '../config.js'

const TABLE = 'gateways_android_devices'

/** A refusal of the device API: the HTTP status and the app's error body ({message}). */
export class DeviceApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403,
    message: string
  ) {
    super(message)
  }
}

export interface AndroidDevice {
  id: string
  name: string
  pushToken: string | null
  /** The gateway number it serves (gateway:allow --device), null until an administrator ties it. */
  gatewayId: number | null
}

const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'

/**
 * `length` random URL-safe characters (the shape of the ids and tokens the
 * app's server makes). The first is a letter or digit: an id that began with
 * `-` would read as a flag where an operator pastes it (gateway:allow --device).
 */
function randomId(length = 21) {
  const bytes = randomBytes(length)
  let id = URL_SAFE[bytes[0] % 62]
  for (const byte of bytes.subarray(1)) id += URL_SAFE[byte & 63]
  return id
}

function sameSecret(given: string, expected: string) {
  const a = Buffer.from(hashKey(given))
  const b = Buffer.from(hashKey(expected))
  return timingSafeEqual(a, b)
}

const deviceOf = (row: Record<string, any>): AndroidDevice => ({
  id: row.id,
  name: row.name,
  pushToken: row.push_token,
  gatewayId: row.gateway_id === null ? null : Number(row.gateway_id),
})

/** The bearer token of an Authorization header, or ''. */
export function bearerOf(header: string | undefined) {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return match ? match[1] : ''
}

/**
 * The device API of the SMS Gateway for Android app in private-server mode
 * (paths and shapes of its own server, capcom6/sms-gateway): registration
 * with the private token (GATEWAYS_ANDROID_PRIVATE_TOKEN), the device's
 * push token update with the token registration gave it, and the tie to a
 * gateway number (AndroidGatewayService serves the rest of the API).
 */
@inject()
export class AndroidDeviceService {
  /**
   * POST /device: a new device. Answers its id, its bearer token, and the
   * login/password the app shows (kept hashed; Quire serves no API for them yet).
   */
  async register(privateToken: string, input: { name?: string; pushToken?: string | null }) {
    const expected = gatewaysConfig.androidPrivateToken
    if (!expected || privateToken === '' || !sameSecret(privateToken, expected)) {
      throw new DeviceApiError(401, 'Unauthorized')
    }
    const id = randomId()
    const token = randomId()
    const secret = randomId()
    const login = secret.slice(0, 6).toUpperCase()
    const password = secret.slice(7).toLowerCase()
    const now = dbTimestamp()
    await db.table(TABLE).insert({
      id,
      name: input.name ?? '',
      push_token: input.pushToken || null,
      token_hash: hashKey(token),
      login,
      password_hash: hashKey(password),
      created_at: now,
      updated_at: now,
    })
    return { id, token, login, password }
  }

  /** The device a bearer token names (401 otherwise). */
  async authenticate(token: string): Promise<AndroidDevice> {
    const row = token ? await db.from(TABLE).where('token_hash', hashKey(token)).first() : null
    if (!row) throw new DeviceApiError(401, 'Unauthorized')
    return deviceOf(row)
  }

  /** A device by id (its webhooks name it in their URL), or null. */
  async byId(id: string): Promise<AndroidDevice | null> {
    const row = await db.from(TABLE).where('id', id).first()
    return row ? deviceOf(row) : null
  }

  /** PATCH /device: the device's push token; the id must be the authenticated device's (403). */
  async updatePushToken(device: AndroidDevice, input: { id: string; pushToken?: string }) {
    if (input.id !== device.id) throw new DeviceApiError(403, 'Forbidden')
    await db
      .from(TABLE)
      .where('id', device.id)
      .update({ push_token: input.pushToken || null, updated_at: dbTimestamp() })
  }

  find(id: string) {
    return db.from(TABLE).where('id', id).first()
  }

  /**
   * An administrator ties a registered phone to an allowed gateway number
   * (gateway:allow --device): it then sends that gateway's SMS and its
   * received SMS go where that gateway's go. False when no device has the id.
   */
  async tie(deviceId: string, gatewayId: number): Promise<boolean> {
    const updated = await db
      .from(TABLE)
      .where('id', deviceId)
      .update({ gateway_id: gatewayId, updated_at: dbTimestamp() })
    return Number(updated) > 0
  }
}
