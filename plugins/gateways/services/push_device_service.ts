import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import type { Actor } from '#core/rpc/base_operation'
import { rpcError } from '#core/rpc/errors'
import { hashKey } from '#core/auth/keys'
import { dbTimestamp } from '#core/db_time'
import { StampService } from '#core/services/stamp_service'
import { isUniqueViolation } from '#core/services/db_errors'
import gatewaysConfig from '../config.js'
import { parseSubscription } from './push/web_push_subscription.js'

const TABLE = 'gateways_push_devices'

/** updatePushId's deviceType values: spec 4.A.2's, and `web_push` (Quire's, a browser's subscription). */
export const DEVICE_TYPES = [
  'gcm_rid',
  'gcm_nk',
  'ios_dt',
  'ios_dt_v2',
  'bb_dt',
  'win_uri',
  'web_push',
] as const
export type DeviceType = (typeof DEVICE_TYPES)[number]

export interface PushIdInput {
  deviceId?: number
  deviceType?: string
  active?: boolean
  registrationId?: string
  projectId?: number
}

const MAX_REGISTRATION_LENGTH = 4096

const invalidRegistration = (why: string) =>
  rpcError('INVALID_PARAMETER', `Invalid parameter registrationID: ${why}`, {
    field: 'registrationID',
  })

/**
 * A registration id checked against its device type, in the form it is stored:
 * FCM/GCM tokens as they are, APNs tokens as lowercase hex (the `<a1b2 ...>`
 * form old iOS clients send is accepted), BlackBerry PINs as 8 hex digits,
 * Windows channel URIs as https URLs, a browser's Web Push subscription as
 * its JSON {endpoint, keys: {p256dh, auth}} (an endpoint of a known push
 * service only).
 */
export function normalizeRegistration(type: DeviceType, raw: string): string {
  const value = raw.trim()
  if (value.length > MAX_REGISTRATION_LENGTH) {
    throw invalidRegistration(`at most ${MAX_REGISTRATION_LENGTH} characters`)
  }
  switch (type) {
    case 'ios_dt':
    case 'ios_dt_v2': {
      const hex = value.replace(/[<>\s]/g, '').toLowerCase()
      if (!/^[0-9a-f]{64,200}$/.test(hex))
        throw invalidRegistration('an APNs token is 64+ hex digits')
      return hex
    }
    case 'bb_dt':
      if (!/^[0-9a-f]{8}$/i.test(value))
        throw invalidRegistration('a BlackBerry PIN is 8 hex digits')
      return value.toLowerCase()
    case 'web_push': {
      const parsed = parseSubscription(value, {
        allowHttp: gatewaysConfig.webPush.allowHttp,
        hosts: gatewaysConfig.webPush.endpointHosts,
      })
      if ('refusal' in parsed) throw invalidRegistration(parsed.refusal)
      return JSON.stringify(parsed.subscription)
    }
    case 'win_uri':
      if (!URL.canParse(value) || new URL(value).protocol !== 'https:') {
        throw invalidRegistration('a Windows channel URI is an https URL')
      }
      return value
    default:
      if (!/^[\w:.-]+$/.test(value)) {
        throw invalidRegistration('an FCM token holds letters, digits and - _ : . only')
      }
      return value
  }
}

function deviceTypeOf(value: string): DeviceType {
  if (!(DEVICE_TYPES as readonly string[]).includes(value)) {
    throw rpcError(
      'INVALID_PARAMETER',
      `Invalid parameter deviceType: one of ${DEVICE_TYPES.join(', ')}`,
      { field: 'deviceType' }
    )
  }
  return value as DeviceType
}

/**
 * Push devices (updatePushId, spec 2.10 and 4.A.2): one row per device token,
 * owned by the user who last registered it. The deviceID is assigned on the
 * first registration and names the row afterwards: the token, type and
 * active state are updated in place.
 */
@inject()
export class PushDeviceService {
  constructor(private stamps: StampService) {}

  async update(actor: Actor, input: PushIdInput, retried = false): Promise<{ deviceId: number }> {
    const type = input.deviceType === undefined ? undefined : deviceTypeOf(input.deviceType)
    const projectId = Number(actor.user.projectId ?? 0)
    if (input.projectId !== undefined && input.projectId !== projectId) {
      throw rpcError(
        'INVALID_PARAMETER',
        `Invalid parameter projectID: this account's is ${projectId} (getUserInfo)`,
        { field: 'projectID' }
      )
    }
    const active = input.active ?? true
    const userId = actor.user.id
    try {
      return await this.stamps.write(async ({ trx }) => {
        const now = dbTimestamp()
        const named = input.deviceId
          ? await trx.from(TABLE).where('id', input.deviceId).where('user_id', userId).first()
          : null
        if (input.deviceId && !named) {
          throw rpcError('NOT_FOUND', `deviceID ${input.deviceId} names no device of this user`)
        }
        const deviceType = type ?? (named?.device_type as DeviceType | undefined)
        if (!deviceType) {
          throw rpcError('MISSING_PARAMETER', 'Missing parameter: deviceType', {
            field: 'deviceType',
          })
        }
        const raw = input.registrationId ?? (named?.registration_id as string | undefined)
        if (raw === undefined) {
          throw rpcError('MISSING_PARAMETER', 'Missing parameter: registrationID', {
            field: 'registrationID',
          })
        }
        // The stored token is kept as it is when neither it nor the type changes: deactivating a
        // device must not fail because the rules changed since it registered (a push host dropped).
        const registration =
          input.registrationId === undefined && named?.device_type === deviceType
            ? raw
            : normalizeRegistration(deviceType, raw)
        const fields = {
          user_id: userId,
          device_type: deviceType,
          registration_id: registration,
          registration_hash: hashKey(registration),
          active,
          project_id: projectId,
          updated_at: now,
        }
        // The token may already have a row: a client that lost its deviceID, an
        // earlier account on the same phone, or a stale double of this device.
        const same = await trx
          .from(TABLE)
          .where('device_type', deviceType)
          .where('registration_hash', fields.registration_hash)
          .first()
        if (named) {
          if (same && Number(same.id) !== Number(named.id))
            await trx.from(TABLE).where('id', same.id).delete()
          await trx.from(TABLE).where('id', named.id).update(fields)
          return { deviceId: Number(named.id) }
        }
        if (same) {
          await trx.from(TABLE).where('id', same.id).update(fields)
          return { deviceId: Number(same.id) }
        }
        const [id] = await trx.table(TABLE).insert({ ...fields, created_at: now })
        return { deviceId: Number(id) }
      })
    } catch (error) {
      // The same token registered twice at once: the other request's row is the device.
      if (!isUniqueViolation(error) || retried) throw error
      return this.update(actor, input, true)
    }
  }

  /** A user's devices (the console, and the deliveries to come). */
  devicesOf(userId: number) {
    return db.from(TABLE).where('user_id', userId).orderBy('id')
  }
}
