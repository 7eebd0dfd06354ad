import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Allows a phone number to register as an SMS gateway, optionally fixing the
 * book its messages go to and tying an SMS Gateway for Android phone to it.
 */
export default class GatewayAllow extends BaseCommand {
  static commandName = 'gateway:allow'
  static description =
    'Allow a phone number to register as an SMS gateway (registerSMSGateway), optionally fixing its book and tying an SMS Gateway for Android phone to it'
  static options: CommandOptions = { startApp: true }

  @args.string({
    description: 'The gateway phone number (E.164, or national in GATEWAYS_DEFAULT_REGION)',
  })
  declare phone: string

  @flags.string({ description: 'The book every message of this gateway goes to: <b_o>/<b_c>' })
  declare book?: string

  @flags.string({
    description:
      'The id of an SMS Gateway for Android phone (registered at /api/mobile/v1/device) that serves this number',
  })
  declare device?: string

  async run() {
    // Imported here: listing the commands must not load the application's services.
    const { SmsGatewayService } = await import('../services/sms_gateway_service.js')
    const { RpcError } = await import('#core/rpc/errors')
    let book: { b_o: string; b_c: string } | null = null
    if (this.book !== undefined) {
      const [owner, code, ...rest] = this.book.split('/').map((part) => part.trim())
      if (!owner || !code || rest.length > 0) {
        this.logger.error("--book must be <b_o>/<b_c> (the owner's user code and the book code)")
        this.exitCode = 1
        return
      }
      book = { b_o: owner, b_c: code }
    }
    try {
      const gateways = await this.app.container.make(SmsGatewayService)
      const { cliActor } = await import('#core/audit/audit_log')
      const allowed = await gateways.allow(this.phone, book, cliActor(GatewayAllow.commandName))
      this.logger.success(
        `${allowed.phone} may register as an SMS gateway${book ? `, its messages going to ${book.b_o}/${book.b_c}` : ''}`
      )
      if (this.device !== undefined) await this.tieDevice(this.device, allowed.phone)
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      this.logger.error(error.message)
      this.exitCode = 1
    }
  }

  private async tieDevice(deviceId: string, phone: string) {
    const { AndroidDeviceService } = await import('../services/android_device_service.js')
    const { SmsGatewayService } = await import('../services/sms_gateway_service.js')
    const gateways = await this.app.container.make(SmsGatewayService)
    const gateway = await gateways.find(phone)
    const devices = await this.app.container.make(AndroidDeviceService)
    if (!(await devices.tie(deviceId.trim(), Number(gateway.id)))) {
      this.logger.error(`No SMS Gateway for Android device has the id ${deviceId}`)
      this.exitCode = 1
      return
    }
    this.logger.success(`The phone ${deviceId} now sends and receives the SMS of ${phone}`)
  }
}
