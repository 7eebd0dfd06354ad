import app from '@adonisjs/core/services/app'
import { rpc, testTransport } from './rpc.js'

/** createOauthkey over real HTTP from a given client address (X-Forwarded-For, trusted from loopback). */
export async function createOauthkeyFrom(key: string, login: string, pwd: string, address: string) {
  const answer = await testTransport().send(
    { req: 'createOauthkey', appkey: key, login, pwd },
    { headers: { 'X-Forwarded-For': address } }
  )
  return answer.body
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
