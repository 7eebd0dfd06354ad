import { Ignitor } from '@adonisjs/core'

/**
 * The application booted in the benchmark's own process (console environment),
 * for seeding with bulk inserts and the kernel's services before the measured
 * server starts. `appRoot` is the checkout's root as a file URL.
 */
export async function bootSeedingApp(appRoot: URL) {
  const ignitor = new Ignitor(appRoot, {
    importer: (filePath: string) =>
      filePath.startsWith('./') || filePath.startsWith('../')
        ? import(new URL(filePath, appRoot).href)
        : import(filePath),
  })
  const app = ignitor.createApp('console')
  app.booting(async () => {
    await import('#start/env')
  })
  await app.init()
  await app.boot()
  return app
}
