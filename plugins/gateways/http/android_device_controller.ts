import type { HttpContext } from '@adonisjs/core/http'
import app from '@adonisjs/core/services/app'
import BodyParserMiddleware from '@adonisjs/core/bodyparser_middleware'
import vine, { errors as vineErrors } from '@vinejs/vine'
import { RpcError } from '#core/rpc/errors'
import { statusOfRpcError } from '../services/android_gateway_service.js'
import {
  AndroidDeviceService,
  DeviceApiError,
  bearerOf,
} from '../services/android_device_service.js'

const registerValidator = vine.compile(
  vine.object({
    name: vine.string().maxLength(128).optional(),
    pushToken: vine.string().maxLength(256).nullable().optional(),
  })
)

const updateValidator = vine.compile(
  vine.object({
    id: vine.string().minLength(1).maxLength(64),
    pushToken: vine.string().maxLength(256).optional(),
  })
)

let parser: BodyParserMiddleware | null = null

/** The JSON body (AdonisJS's body parser, run for these routes only); a 400 when unreadable. */
export async function bodyOf(ctx: HttpContext): Promise<unknown> {
  parser ??= await app.container.make(BodyParserMiddleware)
  try {
    await parser.handle(ctx, async () => {})
  } catch {
    throw new DeviceApiError(400, 'Invalid request body')
  }
  return ctx.request.body()
}

/**
 * The app reads `message` of an error body (its server's ErrorResponse). A
 * refusal of api.php's kind (a received SMS refused as a gateway's sendMsg
 * would be) also names its code.
 */
export function refuse(ctx: HttpContext, error: unknown) {
  if (error instanceof DeviceApiError) {
    return ctx.response.status(error.status).json({ message: error.message })
  }
  if (error instanceof RpcError) {
    const retryAfter = error.extra.retryAfter
    if (retryAfter !== undefined) ctx.response.header('Retry-After', String(retryAfter))
    return ctx.response
      .status(statusOfRpcError(error))
      .json({ message: error.message, code: error.code })
  }
  if (error instanceof vineErrors.E_VALIDATION_ERROR) {
    const [first] = error.messages as { message: string }[]
    return ctx.response.status(400).json({ message: first?.message ?? 'Invalid request' })
  }
  throw error
}

/**
 * The SMS Gateway for Android app's device endpoints (private-server mode),
 * with its own server's paths, bodies and statuses: see AndroidDeviceService.
 */
export default class AndroidDeviceController {
  async register(ctx: HttpContext) {
    try {
      const devices = await app.container.make(AndroidDeviceService)
      const input = await registerValidator.validate(await bodyOf(ctx))
      const token = bearerOf(ctx.request.header('authorization'))
      const device = await devices.register(token, input)
      return ctx.response.status(201).json(device)
    } catch (error) {
      return refuse(ctx, error)
    }
  }

  async update(ctx: HttpContext) {
    try {
      const devices = await app.container.make(AndroidDeviceService)
      const device = await devices.authenticate(bearerOf(ctx.request.header('authorization')))
      const input = await updateValidator.validate(await bodyOf(ctx))
      await devices.updatePushToken(device, input)
      return ctx.response.status(204)
    } catch (error) {
      return refuse(ctx, error)
    }
  }
}
