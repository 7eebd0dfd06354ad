import gatewaysConfig from '../../config.js'
import type { DeviceType } from '../push_device_service.js'
import { ApnsClient } from './apns_client.js'
import { inlineOrFile, readServiceAccount } from './credentials.js'
import { FcmClient } from './fcm_client.js'
import { WebPushClient } from './web_push_client.js'

export type Provider = 'fcm' | 'apns' | 'webpush'

/** Which provider serves a device type; null: none exists any more (BlackBerry, Windows Phone). */
export const PROVIDER_OF: Record<DeviceType, Provider | null> = {
  gcm_rid: 'fcm',
  // A device group's notification key: FCM v1 takes it in `token` like a device's.
  gcm_nk: 'fcm',
  ios_dt: 'apns',
  ios_dt_v2: 'apns',
  bb_dt: null,
  win_uri: null,
  web_push: 'webpush',
}

/** The outbox channel of each provider. */
export const CHANNEL_OF: Record<Provider, string> = {
  fcm: 'push_fcm',
  apns: 'push_apns',
  webpush: 'push_web',
}

/**
 * The provider clients, made from the plugin's settings when first needed
 * and made again when the settings change (tests point them at local
 * fakes). A provider whose settings are incomplete is off: null.
 */
export class PushProviders {
  private fcmClient: { key: string; client: FcmClient } | null = null
  private apnsClient: { key: string; client: ApnsClient } | null = null
  private webPushClient: { key: string; client: WebPushClient } | null = null

  fcm(): FcmClient | null {
    const settings = gatewaysConfig.fcm
    if (!settings.serviceAccount) return null
    const key = JSON.stringify([settings, gatewaysConfig.pushTimeoutMs])
    if (this.fcmClient?.key !== key) {
      const account = readServiceAccount(settings.serviceAccount)
      const projectId = settings.projectId ?? account.project_id
      if (!projectId)
        throw new Error('GATEWAYS_FCM_PROJECT_ID: unset and not in the service account')
      this.fcmClient = {
        key,
        client: new FcmClient({
          account,
          projectId,
          baseUrl: settings.baseUrl,
          tokenUrl: settings.tokenUrl,
          timeoutMs: gatewaysConfig.pushTimeoutMs,
        }),
      }
    }
    return this.fcmClient.client
  }

  apns(): ApnsClient | null {
    const settings = gatewaysConfig.apns
    if (!settings.key || !settings.keyId || !settings.teamId || !settings.topic) return null
    const key = JSON.stringify([settings, gatewaysConfig.pushTimeoutMs])
    if (this.apnsClient?.key !== key) {
      this.apnsClient?.client.close()
      this.apnsClient = {
        key,
        client: new ApnsClient({
          key: inlineOrFile(settings.key, '-----'),
          keyId: settings.keyId,
          teamId: settings.teamId,
          topic: settings.topic,
          baseUrl: settings.baseUrl,
          timeoutMs: gatewaysConfig.pushTimeoutMs,
        }),
      }
    }
    return this.apnsClient.client
  }

  webPush(): WebPushClient | null {
    if (!this.configured('webpush')) return null
    const settings = gatewaysConfig.webPush
    const key = JSON.stringify([settings, gatewaysConfig.pushTimeoutMs])
    if (this.webPushClient?.key !== key) {
      this.webPushClient = {
        key,
        client: new WebPushClient({
          publicKey: settings.publicKey!,
          privateKey: settings.privateKey!,
          subject: settings.subject!,
          ttlSeconds: settings.ttlSeconds,
          allowHttp: settings.allowHttp,
          hosts: settings.endpointHosts,
          timeoutMs: gatewaysConfig.pushTimeoutMs,
        }),
      }
    }
    return this.webPushClient.client
  }

  /** Whether a provider's settings are all there (cheap: no key is read). */
  configured(provider: Provider): boolean {
    if (provider === 'fcm') return !!gatewaysConfig.fcm.serviceAccount
    if (provider === 'webpush') {
      const { publicKey, privateKey, subject } = gatewaysConfig.webPush
      return !!(publicKey && privateKey && subject)
    }
    const { key, keyId, teamId, topic } = gatewaysConfig.apns
    return !!(key && keyId && teamId && topic)
  }

  /** The device types some configured provider serves. */
  servedTypes(): DeviceType[] {
    return (Object.keys(PROVIDER_OF) as DeviceType[]).filter((type) => {
      const provider = PROVIDER_OF[type]
      return provider !== null && this.configured(provider)
    })
  }
}
