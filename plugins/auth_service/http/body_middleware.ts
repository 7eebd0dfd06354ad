import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import app from '@adonisjs/core/services/app'
import BodyParserMiddleware from '@adonisjs/core/bodyparser_middleware'
import { sendError } from './responses.js'

let parser: BodyParserMiddleware | null = null

/**
 * AdonisJS's body parser (config/bodyparser.ts) for the auth routes only.
 * Errors are caught here because AdonisJS hands an error thrown by a
 * middleware straight to the global exception handler, which would answer
 * HTML or text instead of a 7.B JSON body.
 */
export default class AuthBodyMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    parser ??= await app.container.make(BodyParserMiddleware)
    try {
      await parser.handle(ctx, async () => {})
    } catch (error) {
      return sendError(ctx, error)
    }
    return next()
  }
}
