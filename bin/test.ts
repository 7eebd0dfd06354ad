/*
| Test runner entrypoint: `node ace test` spawns this file.
*/
process.env.NODE_ENV = 'test'

import 'reflect-metadata'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { configure, processCLIArgs, run } from '@japa/runner'

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
  .testRunner()
  .configure(async (app) => {
    const { runnerHooks, ...config } = await import('../tests/bootstrap.js')

    processCLIArgs(process.argv.splice(2))
    configure({
      ...app.rcFile.tests,
      ...config,
      ...{
        setup: runnerHooks.setup,
        teardown: runnerHooks.teardown.concat([() => app.terminate()]),
      },
    })
  })
  .run(() => run())
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
  .finally(exitWhenDone)

/**
 * Japa leaves the process to end on its own once the run is over. A handle a
 * test forgot to close (a socket, a timer, a child's pipe) would then keep CI
 * waiting forever: after a grace period, name what is still open and exit
 * with the run's own exit code.
 */
function exitWhenDone() {
  const GRACE_MS = 5000
  setTimeout(() => {
    const open = process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout')
    console.error(`test runner: still open ${GRACE_MS} ms after the run: ${open.join(', ')}`)
    process.exit()
  }, GRACE_MS).unref()
}
