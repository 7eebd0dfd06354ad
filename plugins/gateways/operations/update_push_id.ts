import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import type { Infer } from '@vinejs/vine/types'
import { BaseOperation, type OperationContext } from '#core/rpc/base_operation'
import { flag, int, stamp, text } from '#core/rpc/wire'
import { PushDeviceService } from '../services/push_device_service.js'

const validator = vine.compile(
  vine.object({
    deviceID: stamp().optional(),
    deviceType: text().optional(),
    active: flag().optional(),
    registrationID: text().optional(),
    projectID: int().optional(),
  })
)

/**
 * updatePushId (spec 4.A.2, 2.10): registers or updates the caller's push
 * device and answers its deviceID (a number, client-facts).
 */
@inject()
export default class UpdatePushId extends BaseOperation {
  static operation = 'updatePushId'
  static writes = true
  static validator = validator

  constructor(private devices: PushDeviceService) {
    super()
  }

  async handle(input: Infer<typeof validator>, ctx: OperationContext) {
    const { deviceId } = await this.devices.update(ctx.actor!, {
      deviceId: input.deviceID,
      deviceType: input.deviceType,
      active: input.active,
      registrationId: input.registrationID,
      projectId: input.projectID,
    })
    return { deviceID: deviceId }
  }
}
