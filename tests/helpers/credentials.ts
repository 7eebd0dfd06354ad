import app from '@adonisjs/core/services/app'
import { rpc } from './rpc.js'
import { serverUrl } from './server.js'

/** createOauthkey over real HTTP from a given client address (X-Forwarded-For, trusted from loopback). */
export async function createOauthkeyFrom(key: string, login: string, pwd: string, address: string) {
  const response = await fetch(`${serverUrl()}/live/api.php`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Forwarded-For': address,
    },
    body: new URLSearchParams({ req: 'createOauthkey', appkey: key, login, pwd }).toString(),
  })
  return (await response.json()) as Record<string, any>
}

/** A fresh application key. */
export async function newAppkey(appname: string) {
  const answer = await rpc({ req: 'createAppkey', appname })
  return answer.body.appkey as string
}

/**
 * Counts the hash verifications made while `run` runs, by wrapping the
 * application's hash manager (every password check goes through it).
 */
export async function countingVerifications(run: () => Promise<void>) {
  const manager = await app.container.make('hash')
  const original = manager.verify
  let count = 0
  manager.verify = function (this: typeof manager, ...args: Parameters<typeof original>) {
    count++
    return original.apply(this, args)
  }
  try {
    await run()
  } finally {
    manager.verify = original
  }
  return count
}
