import { inject } from '@adonisjs/core'
import app from '@adonisjs/core/services/app'
import logger from '@adonisjs/core/services/logger'
import type { HttpContext } from '@adonisjs/core/http'
import {
  mergeParams,
  operationName,
  parseBody,
  parseQuery,
  type BodyLimits,
  type ParsedRequest,
} from '#core/rpc/params'
import { Dispatcher } from '#core/rpc/dispatcher'
import { startUploadSweeper } from '#core/rpc/upload_temp'

/**
 * Largest urlencoded/JSON body; and largest total of file parts written before the body names
 * the operation (a part after `req` has the operation's own bound, `static files`).
 */
const MAX_FORM_BYTES = 20 * 1024 * 1024
const MAX_FILES_BEFORE_REQ = 200 * 1024 * 1024

/**
 * `/live/api.php`: GET or POST, parameters from the query string and a
 * urlencoded, multipart or JSON body. The answer is always HTTP 200 with
 * Content-Type exactly `application/json` (one client compares the string).
 */
@inject()
export default class ApiController {
  private limits: BodyLimits

  /** Made once, when the routes load (start/routes.ts): the temp upload folder is swept then. */
  constructor(private dispatcher: Dispatcher) {
    this.limits = {
      maxFormBytes: MAX_FORM_BYTES,
      maxFileBytes: MAX_FILES_BEFORE_REQ,
      filesOf: (req) => this.dispatcher.filesOf(req),
    }
    if (app.getEnvironment() !== 'console')
      startUploadSweeper((error) => logger.warn({ err: error }, 'upload temp folder sweep failed'))
  }

  async handle({ request, response }: HttpContext) {
    const nodeRequest = request.request
    const query = parseQuery(nodeRequest.url)
    let parsed: ParsedRequest | null = null
    let body: Record<string, unknown>
    try {
      parsed = await parseBody(nodeRequest, this.limits, query)
      const params = mergeParams(query, parsed.params)
      body = await this.dispatcher.dispatch({ params, files: parsed.files, ip: request.ip() })
    } catch (error) {
      body = this.dispatcher.failure(operationName(query), error)
    } finally {
      await parsed?.cleanup()
    }
    response.status(200)
    response.header('Content-Type', 'application/json')
    response.header('Cache-Control', 'no-store')
    response.send(JSON.stringify(body))
  }
}
