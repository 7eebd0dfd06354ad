import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { inject } from '@adonisjs/core'
import app from '@adonisjs/core/services/app'
import logger from '@adonisjs/core/services/logger'
import server from '@adonisjs/core/services/server'
import type { HttpContext } from '@adonisjs/core/http'
import {
  mergeParams,
  operationName,
  holdsTempFiles,
  parseBody,
  parseQuery,
  readsNoBody,
  type BodyLimits,
  type ParsedRequest,
} from '#core/rpc/params'
import { Dispatcher } from '#core/rpc/dispatcher'
import { answerJson } from '#core/rpc/answer_json'
import { startUploadSweeper } from '#core/rpc/upload_temp'
import { serveApiAhead } from '#core/http/node_server'
import quireConfig from '#config/quire'
import env from '#start/env'

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
 *
 * Two doors, one answer: `handleNode` serves the request straight from Node's
 * server, ahead of the router (node_server.ts serveApiAhead; QUIRE_API_FAST_PATH=false
 * turns it off), and `handle` is the router's route. Both run `answer` and write the
 * same status and headers.
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
    if (env.get('QUIRE_API_FAST_PATH', true)) {
      serveApiAhead(
        quireConfig.urlPrefixes.map((prefix) => `${prefix}/api.php`),
        (req, res) =>
          this.handleNode(req, res).catch((error) => {
            // Only writing the answer can fail here (answer() never throws): as the router's
            // response writer does, log it and end the exchange.
            logger.fatal({ err: error }, 'api.php: the answer could not be written')
            if (!res.headersSent) res.writeHead(500)
            res.end()
          })
      )
    }
  }

  /** The answer's JSON text: every failure is a `nok` envelope, nothing is thrown. */
  async answer(nodeRequest: IncomingMessage, ip: string): Promise<string> {
    const query = parseQuery(nodeRequest.url)
    let parsed: ParsedRequest | null = null
    let body: Record<string, unknown>
    try {
      // A GET or HEAD has no body to read (parseBody's answer would be no parameters, no
      // files): its query string is the request's parameters, with nothing to wait for.
      if (readsNoBody(nodeRequest)) {
        body = await this.dispatcher.dispatch({ params: query, files: [], ip })
      } else {
        parsed = await parseBody(nodeRequest, this.limits, query)
        const params = mergeParams(query, parsed.params)
        body = await this.dispatcher.dispatch({ params, files: parsed.files, ip })
      }
    } catch (error) {
      body = this.dispatcher.failure(operationName(query), error)
    } finally {
      // Only a multipart body that wrote temp files has any to remove.
      if (parsed !== null && holdsTempFiles(parsed))
        await parsed.cleanup().catch((error) => {
          logger.warn({ err: error }, 'api.php: an upload temp file could not be removed')
        })
    }
    try {
      return answerJson(body)
    } catch (error) {
      return JSON.stringify(this.dispatcher.failure(operationName(query), error))
    }
  }

  /** The router's route. */
  async handle({ request, response }: HttpContext) {
    const text = await this.answer(request.request, request.ip())
    response.status(200)
    response.header('Content-Type', 'application/json')
    response.header('Cache-Control', 'no-store')
    response.send(text)
  }

  /**
   * Ahead of the router: the headers AdonisJS's Response writes for `handle` (lower-case
   * names, this order, the request's X-Request-Id echoed), and the client address as
   * Request.ip() finds it (TRUSTED_PROXIES).
   */
  async handleNode(req: IncomingMessage, res: ServerResponse) {
    const text = await this.answer(req, clientAddress(req, res))
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/json',
      'cache-control': 'no-store',
    }
    const requestId = req.headers['x-request-id']
    if (requestId) headers['x-request-id'] = requestId
    // Sent as text: Node then writes the head and the body in one write of one string, encoded
    // as it is copied to the socket (a Buffer made here was a copy more, sent with the head as
    // two pieces by writev).
    headers['content-length'] = String(Buffer.byteLength(text))
    res.writeHead(200, headers)
    res.end(text)
  }
}

/**
 * Request.ip(): without X-Forwarded-For, proxy-addr answers the socket's address without asking
 * the trust function; with one, AdonisJS's own Request answers (config/app.ts trustProxy).
 */
function clientAddress(req: IncomingMessage, res: ServerResponse): string {
  if (!req.headers['x-forwarded-for']) return req.socket.remoteAddress as string
  return server.createRequest(req, res).ip()
}
