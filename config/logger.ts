import env from '#start/env'
import app from '@adonisjs/core/services/app'
import { defineConfig, targets } from '@adonisjs/core/logger'
import { captureLogged } from '#core/health/error_log'

/** pino's level number of `error`: lines at or above it are kept for the console's Health page. */
const ERROR_LEVEL = 50

const loggerConfig = defineConfig({
  default: 'app',
  loggers: {
    app: {
      enabled: true,
      name: 'quire',
      level: env.get('LOG_LEVEL', app.inTest ? 'warn' : 'info'),
      hooks: {
        logMethod(args, write, level) {
          if (level >= ERROR_LEVEL) captureLogged(args, (this as any).bindings?.())
          return write.apply(this, args)
        },
      },
      // Production and tests write JSON lines to stdout from the main thread: a pino transport
      // would add a worker thread that costs CPU even when the server is idle.
      ...(app.inProduction || app.inTest
        ? {}
        : { transport: { targets: targets().push(targets.pretty()).toArray() } }),
    },
  },
})

export default loggerConfig

declare module '@adonisjs/core/types' {
  export interface LoggersList extends InferLoggers<typeof loggerConfig> {}
}
