import { PassThrough } from 'node:stream'
import type { HttpContext } from '@adonisjs/core/http'
import app from '@adonisjs/core/services/app'
import vine from '@vinejs/vine'
import {
  AndroidDeviceService,
  DeviceApiError,
  bearerOf,
} from '../services/android_device_service.js'
import { AndroidGatewayService, PROCESSING_STATES } from '../services/android_gateway_service.js'
import { bodyOf, refuse } from './android_device_controller.js'

/** PATCH /message: client-go's MobilePatchMessageRequest (an array of state reports). */
const statesValidator = vine.compile(
  vine
    .array(
      vine.object({
        id: vine.string().minLength(1).maxLength(36),
        state: vine.enum(PROCESSING_STATES),
        recipients: vine
          .array(
            vine.object({
              phoneNumber: vine.string().minLength(1).maxLength(512),
              state: vine.enum(PROCESSING_STATES),
              error: vine.string().maxLength(255).nullable().optional(),
            })
          )
          .minLength(1),
      })
    )
    .maxLength(500)
)

/** A webhook the app posts: its id (the same on every retry), event and payload. */
const webhookValidator = vine.compile(
  vine.object({
    id: vine.string().minLength(1).maxLength(64),
    event: vine.string().maxLength(64),
    payload: vine.object({
      messageId: vine.string().maxLength(64).optional(),
      phoneNumber: vine.string().maxLength(64).optional(),
      message: vine.string().maxLength(65_535).optional(),
      reason: vine.string().maxLength(255).nullable().optional(),
    }),
  })
)

async function services() {
  return Promise.all([
    app.container.make(AndroidDeviceService),
    app.container.make(AndroidGatewayService),
  ])
}

/** The device the bearer token names (401 otherwise). */
async function deviceOf(ctx: HttpContext, devices: AndroidDeviceService) {
  return devices.authenticate(bearerOf(ctx.request.header('authorization')))
}

/** The origin the phone reached Quire at (the webhook URLs' default base). */
const originOf = (ctx: HttpContext) =>
  `${ctx.request.protocol() === 'https' ? 'https' : 'http'}://${ctx.request.host() ?? ''}`

/**
 * The rest of the SMS Gateway for Android app's device API (private-server
 * mode), at its own server's paths: pending messages, their states, the
 * event stream, the webhook list; and the endpoint those webhooks post to.
 * See AndroidGatewayService.
 */
export default class AndroidGatewayController {
  /** GET /api/mobile/v1/message */
  async messages(ctx: HttpContext) {
    try {
      const [devices, gateways] = await services()
      const device = await deviceOf(ctx, devices)
      return ctx.response.json(await gateways.pendingMessages(device))
    } catch (error) {
      return refuse(ctx, error)
    }
  }

  /** PATCH /api/mobile/v1/message */
  async updateStates(ctx: HttpContext) {
    try {
      const [devices, gateways] = await services()
      const device = await deviceOf(ctx, devices)
      const reports = await statesValidator.validate(await bodyOf(ctx))
      await gateways.updateStates(device, reports)
      return ctx.response.status(204)
    } catch (error) {
      return refuse(ctx, error)
    }
  }

  /** GET /api/mobile/v1/webhooks */
  async webhooks(ctx: HttpContext) {
    try {
      const [devices, gateways] = await services()
      const device = await deviceOf(ctx, devices)
      return ctx.response.json(await gateways.webhooks(device, originOf(ctx)))
    } catch (error) {
      return refuse(ctx, error)
    }
  }

  /** GET /api/mobile/v1/events: a server-sent event stream, open until the phone closes it. */
  async events(ctx: HttpContext) {
    let device
    const [devices, gateways] = await services()
    try {
      device = await deviceOf(ctx, devices)
    } catch (error) {
      return refuse(ctx, error)
    }
    const stream = new PassThrough()
    // A first comment sends the headers now: the phone knows the stream is open.
    stream.write(':connected\n\n')
    const stop = await gateways.subscribe(
      device,
      (frame) => stream.write(frame),
      () => stream.end()
    )
    ctx.request.request.once('close', () => {
      stop()
      stream.end()
    })
    ctx.response.header('Content-Type', 'text/event-stream')
    ctx.response.header('Cache-Control', 'no-cache')
    ctx.response.header('Connection', 'keep-alive')
    ctx.response.header('X-Accel-Buffering', 'no')
    ctx.response.stream(stream)
  }

  /** POST /gateways/android/webhook/:deviceId?key=...: the URL GET /webhooks gave the phone. */
  async webhook(ctx: HttpContext) {
    try {
      const [devices, gateways] = await services()
      const deviceId = String(ctx.params.deviceId ?? '')
      const key = String(ctx.request.qs().key ?? '')
      const device = gateways.webhookKeyMatches(deviceId, key) ? await devices.byId(deviceId) : null
      if (!device) throw new DeviceApiError(401, 'Unauthorized')
      const post = await webhookValidator.validate(await bodyOf(ctx))
      const stored = await gateways.webhook(device, post)
      return ctx.response.status(200).json(stored ?? {})
    } catch (error) {
      return refuse(ctx, error)
    }
  }
}
