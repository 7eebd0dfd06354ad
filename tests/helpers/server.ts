import type { AddressInfo } from 'node:net'
import app from '@adonisjs/core/services/app'
import testUtils from '@adonisjs/core/services/test_utils'
import { createQuireServer } from '#core/http/node_server'

let baseUrl = ''

/** Boots the real HTTP server on a free loopback port; tests talk to it over real HTTP. */
export async function startServer() {
  const close = await testUtils.httpServer().start(createQuireServer)
  const server = await app.container.make('server')
  const nodeServer = server.getNodeServer()!
  // The tests and the server share one event loop: under load its lag can exceed the second by
  // which fetch closes an idle connection before the server's keep-alive timeout would, and a
  // request sent on a connection the server is closing fails with ECONNRESET. A longer timeout
  // keeps that race away from the tests (production keeps Node's default).
  nodeServer.keepAliveTimeout = 60_000
  const address = nodeServer.address() as AddressInfo
  baseUrl = `http://127.0.0.1:${address.port}`
  return close
}

/** http://127.0.0.1:<port> of the server started for this run. */
export function serverUrl() {
  if (!baseUrl) throw new Error('The test server has not been started')
  return baseUrl
}
