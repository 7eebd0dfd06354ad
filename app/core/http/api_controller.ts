import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { mergeParams, parseBody, parseQuery, type ParsedRequest } from '#core/rpc/params'
import { Dispatcher, operationName } from '#core/rpc/dispatcher'

const BODY_LIMITS = { maxFormBytes: 20 * 1024 * 1024, maxFileBytes: 200 * 1024 * 1024 }

/**
 * `/live/api.php`: GET or POST, parameters from the query string and a
 * urlencoded, multipart or JSON body. The answer is always HTTP 200 with
 * Content-Type exactly `application/json` (one client compares the string).
 */
@inject()
export default class ApiController {
  constructor(private dispatcher: Dispatcher) {}

  async handle({ request, response }: HttpContext) {
    const nodeRequest = request.request
    const query = parseQuery(nodeRequest.url)
    let parsed: ParsedRequest | null = null
    let body: Record<string, unknown>
    try {
      parsed = await parseBody(nodeRequest, BODY_LIMITS)
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
