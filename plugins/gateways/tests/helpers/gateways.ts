import app from '@adonisjs/core/services/app'
import { UserService } from '#core/services/user_service'
import { rpc } from '#tests/helpers/rpc'
import type { Client } from '#plugins/books/tests/helpers/books'
import { SmsGatewayService, type BookPair } from '#plugins/gateways/services/sms_gateway_service'

const [users, gateways] = await Promise.all([
  app.container.make(UserService),
  app.container.make(SmsGatewayService),
])

let counter = 0

/** A new valid French mobile number in E.164 (+33612 and 6 digits), unique within the run. */
export function uniquePhone() {
  counter++
  const digits = `${String(Date.now() % 1000).padStart(3, '0')}${String(counter % 1000).padStart(3, '0')}`
  return `+33612${digits}`
}

/** The same number as people write it: +33 6 12 34 56 78. */
export const spaced = (e164: string) =>
  `${e164.slice(0, 3)} ${e164.slice(3, 4)} ${e164.slice(4).replace(/(\d\d)(?=\d)/g, '$1 ')}`

/** Gives the client's user this number as mob1 (the phone column, as the console sets it). */
export async function withPhone(who: Client, phone: string) {
  await users.update(who.user, { phone })
}

/** Calls api.php as nobody (registerSMSGateway). */
export async function call(params: Record<string, unknown>) {
  const answer = await rpc(params)
  return answer.body
}

export interface Gateway {
  phone: string
  sesskey: string
  /** api.php as the gateway: its number as o_u and its sesskey. */
  call(params: Record<string, unknown>): Promise<Record<string, any>>
}

/** A number an administrator allowed (the service gateway:allow calls), registered by the phone. */
export async function registeredGateway(
  options: { book?: BookPair; register?: Record<string, unknown> } = {}
): Promise<Gateway> {
  const phone = uniquePhone()
  await gateways.allow(phone, options.book ?? null)
  const answer = await call({
    req: 'registerSMSGateway',
    o_u: phone,
    appname: 'sms-gateway-tests',
    ...options.register,
  })
  if (answer.status !== 'ok')
    throw new Error(`registerSMSGateway failed: ${JSON.stringify(answer)}`)
  return gatewayOf(phone, answer.sesskey)
}

export function gatewayOf(phone: string, sesskey: string): Gateway {
  return {
    phone,
    sesskey,
    call: (params) => call({ o_u: phone, sesskey, ...params }),
  }
}

export { gateways as gatewayService }
