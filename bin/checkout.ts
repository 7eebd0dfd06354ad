import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const APP_ROOT = new URL('../', import.meta.url)

/**
 * The checkout this app root belongs to: the app root itself, or, for the compiled build that
 * `npm start` serves (bin/build.ts writes quire-build.json there), the checkout it was built
 * from. The build reads that checkout's .env and keeps its data in that checkout's ./data.
 */
export function checkoutRoot(appRoot: URL = APP_ROOT): URL {
  const stamp = new URL('quire-build.json', appRoot)
  if (!existsSync(stamp)) return appRoot
  return new URL(JSON.parse(readFileSync(stamp, 'utf8')).checkout, appRoot)
}

/*
| On import, before any module reads the environment (bin/server.ts and bin/console.ts import
| this first): the build reads the checkout's .env files, unless ENV_PATH says otherwise.
*/
const checkout = checkoutRoot()
if (checkout.href !== APP_ROOT.href) process.env.ENV_PATH ??= fileURLToPath(checkout)
