import type { AddressInfo } from 'node:net'
import app from '@adonisjs/core/services/app'
import testUtils from '@adonisjs/core/services/test_utils'
import { createQuireServer } from '#core/http/node_server'

let baseUrl = ''

/** Boots the real HTTP server on a free loopback port; tests talk to it over real HTTP. */
export async function startServer() {
  const close = await testUtils.httpServer().start(createQuireServer)
  const server = await app.container.make('server')
  const address = server.getNodeServer()!.address() as AddressInfo
  baseUrl = `http://127.0.0.1:${address.port}`
  return close
}

/** http://127.0.0.1:<port> of the server started for this run. */
export function serverUrl() {
  if (!baseUrl) throw new Error('The test server has not been started')
  return baseUrl
}
