/*
| HTTP server entrypoint: `npm start` (bin/start.js) serves its compiled build (bin/build.ts),
| `npm run dev` runs it through `node ace serve`.
*/
import 'reflect-metadata'
// First: in the compiled build, the checkout's .env (bin/checkout.ts).
import './checkout.js'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { createQuireServer } from '#core/http/node_server'

const APP_ROOT = new URL('../', import.meta.url)

const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('#start/env')
    })
    app.listen('SIGTERM', () => app.terminate())
    app.listenIf(app.managedByPm2, 'SIGINT', () => app.terminate())
  })
  .httpServer()
  .start(createQuireServer)
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
