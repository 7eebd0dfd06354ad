import env from '#start/env'
import type { CountryCode } from 'libphonenumber-js'

/** Settings of the gateways plugin (env variables listed in README.md). */
const gatewaysConfig = {
  /**
   * Region of phone numbers written without their country code (ISO 3166
   * alpha-2, e.g. FR): `0612345678` is then +33612345678. Unset, only
   * international numbers (+33..., 0033...) are understood.
   */
  defaultRegion: (env.get('GATEWAYS_DEFAULT_REGION')?.trim().toUpperCase() || undefined) as
    CountryCode | undefined,
  /** Requests one gateway may make per window (registrations and messages alike). */
  ratePerGateway: env.get('GATEWAYS_RATE_PER_GATEWAY', 120),
  /** Messages one sender may send through gateways per window (all gateways together). */
  ratePerSender: env.get('GATEWAYS_RATE_PER_SENDER', 30),
  /** The window of both limits: a duration ('1 minute', '30s') or seconds. */
  rateWindow: env.get('GATEWAYS_RATE_WINDOW', '1 minute'),
  /**
   * The private token the SMS Gateway for Android app is configured with
   * (private-server mode): its device registration must carry it. Unset,
   * no phone may register through the app's device API.
   */
  androidPrivateToken: env.get('GATEWAYS_ANDROID_PRIVATE_TOKEN')?.trim() || undefined,
}

export default gatewaysConfig
