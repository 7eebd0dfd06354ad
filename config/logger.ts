import env from '#start/env'
import app from '@adonisjs/core/services/app'
import { defineConfig, targets } from '@adonisjs/core/logger'

const loggerConfig = defineConfig({
  default: 'app',
  loggers: {
    app: {
      enabled: true,
      name: 'quire',
      level: env.get('LOG_LEVEL', app.inTest ? 'warn' : 'info'),
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
