import http from 'node:http'
import http2 from 'node:http2'
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { exportPKCS8, generateKeyPair, importJWK, jwtVerify, type CryptoKey } from 'jose'
import webpush from 'web-push'

/** What FCM and APNs refuse above (bytes of the request body). */
const MAX_BODY = 4096

function readBody(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    stream.on('error', reject)
  })
}

export interface FakeFcm {
  url: string
  projectId: string
  /** The service account's JSON key as GATEWAYS_FCM_SERVICE_ACCOUNT takes it. */
  serviceAccount: string
  /** Messages accepted (the v1 `message` objects). */
  received: Record<string, any>[]
  /** Requests refused, with why (a test expects none unless it provokes one). */
  rejected: string[]
  tokensIssued: number
  /** While set, send requests wait for it (a test holds a delivery in flight). */
  gate: Promise<void> | null
  /** Send requests waiting at the gate. */
  waiting: number
  /** Device tokens answered 404 UNREGISTERED. */
  unregistered: Set<string>
  /** Makes every access token issued so far invalid (FCM then answers 401). */
  revokeTokens(): void
  close(): Promise<void>
}

/**
 * A local FCM: the OAuth token endpoint checks the JWT assertion as Google
 * does (RS256 signature by the service account's key, iss, aud = the token
 * URL, scope, an hour at most) and the send endpoint checks the bearer
 * token it issued, the project, the message's shape (a token; string data
 * values) and size. Loopback only.
 */
export async function startFakeFcm(): Promise<FakeFcm> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  const projectId = 'quire-push-tests'
  const issued = new Set<string>()
  const fake = {} as FakeFcm
  const server = http.createServer(async (request, response) => {
    const body = await readBody(request)
    const answer = (status: number, json: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(json))
    }
    const refuse = (status: number, why: string, extra: Record<string, unknown> = {}) => {
      fake.rejected.push(why)
      answer(status, { error: { code: status, message: why, ...extra } })
    }
    if (request.method === 'POST' && request.url === '/token') {
      const form = new URLSearchParams(body)
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
        return refuse(400, 'bad grant_type')
      try {
        const { payload, protectedHeader } = await jwtVerify(
          form.get('assertion') ?? '',
          publicKey as CryptoKey,
          { issuer: account.client_email, audience: `${fake.url}/token`, algorithms: ['RS256'] }
        )
        if (protectedHeader.kid !== account.private_key_id) return refuse(400, 'wrong kid')
        if (payload.scope !== 'https://www.googleapis.com/auth/firebase.messaging')
          return refuse(400, 'wrong scope')
        if (!payload.iat || !payload.exp || payload.exp - payload.iat > 3600)
          return refuse(400, 'lifetime above an hour')
      } catch (error) {
        return refuse(400, `assertion refused: ${(error as Error).message}`)
      }
      const token = `ya29.${randomBytes(24).toString('base64url')}`
      issued.add(token)
      fake.tokensIssued++
      return answer(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' })
    }
    const path = `/v1/projects/${projectId}/messages:send`
    if (request.method !== 'POST' || request.url !== path) return refuse(404, `no ${request.url}`)
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
    if (!bearer || !issued.has(bearer))
      return refuse(401, 'Request had invalid authentication credentials', {
        status: 'UNAUTHENTICATED',
      })
    if (Buffer.byteLength(body) > MAX_BODY) return refuse(400, 'message too big')
    if (fake.gate) {
      fake.waiting++
      await fake.gate
      fake.waiting--
    }
    let message: Record<string, any>
    try {
      message = JSON.parse(body).message
    } catch {
      return refuse(400, 'not JSON')
    }
    if (!message || typeof message.token !== 'string') return refuse(400, 'no message.token')
    const data = message.data ?? {}
    if (Object.values(data).some((value) => typeof value !== 'string'))
      return refuse(400, 'data values must be strings', { status: 'INVALID_ARGUMENT' })
    if (fake.unregistered.has(message.token))
      return answer(404, {
        error: {
          code: 404,
          message: 'Requested entity was not found.',
          status: 'NOT_FOUND',
          details: [
            {
              '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError',
              'errorCode': 'UNREGISTERED',
            },
          ],
        },
      })
    fake.received.push(message)
    answer(200, { name: `projects/${projectId}/messages/${fake.received.length}` })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const account = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: await exportPKCS8(privateKey as CryptoKey),
    client_email: `quire@${projectId}.iam.gserviceaccount.com`,
    token_uri: `${url}/token`,
  }
  Object.assign(fake, {
    url,
    projectId,
    serviceAccount: JSON.stringify(account),
    received: [],
    rejected: [],
    tokensIssued: 0,
    gate: null,
    waiting: 0,
    unregistered: new Set<string>(),
    revokeTokens: () => issued.clear(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  })
  return fake
}

export interface FakeApns {
  url: string
  /** The .p8 key's PEM, its key id, the team and the topic the fake expects. */
  key: string
  keyId: string
  teamId: string
  topic: string
  received: { token: string; headers: http2.IncomingHttpHeaders; payload: Record<string, any> }[]
  rejected: string[]
  /** Device tokens answered 410 Unregistered. */
  unregistered: Set<string>
  /** Provider tokens answered 403 ExpiredProviderToken. */
  expired: Set<string>
  /** Provider tokens seen, in order. */
  providerTokens: string[]
  close(): Promise<void>
}

/**
 * A local APNs over cleartext HTTP/2: checks what Apple checks of a token
 * request (the ES256 provider token's signature, kid and iss; apns-topic;
 * the device token's form; apns-collapse-id at most 64 bytes; the payload
 * at most 4 KiB) and answers Apple's statuses and reasons. Loopback only.
 */
export async function startFakeApns(): Promise<FakeApns> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const fake = {
    keyId: 'ABC123DEFG',
    teamId: 'TEAM123456',
    topic: 'app.quire.tests',
    received: [],
    rejected: [],
    unregistered: new Set<string>(),
    expired: new Set<string>(),
    providerTokens: [],
  } as unknown as FakeApns
  const server = http2.createServer()
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  server.on('stream', async (stream, headers) => {
    const body = await readBody(stream)
    const answer = (status: number, reason?: string) => {
      if (reason && status !== 410 && reason !== 'ExpiredProviderToken') fake.rejected.push(reason)
      stream.respond({ ':status': status, 'apns-id': randomBytes(16).toString('hex') })
      stream.end(reason ? JSON.stringify({ reason, timestamp: Date.now() }) : undefined)
    }
    const path = /^\/3\/device\/([^/]+)$/.exec(String(headers[':path']))
    if (headers[':method'] !== 'POST' || !path) return answer(404, 'BadPath')
    const bearer = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1]
    if (!bearer) return answer(403, 'MissingProviderToken')
    fake.providerTokens.push(bearer)
    if (fake.expired.has(bearer)) return answer(403, 'ExpiredProviderToken')
    try {
      const { payload, protectedHeader } = await jwtVerify(bearer, publicKey as CryptoKey, {
        algorithms: ['ES256'],
        issuer: fake.teamId,
      })
      if (protectedHeader.kid !== fake.keyId) return answer(403, 'InvalidProviderToken')
      if (!payload.iat || Date.now() / 1000 - payload.iat > 3600)
        return answer(403, 'ExpiredProviderToken')
    } catch {
      return answer(403, 'InvalidProviderToken')
    }
    if (headers['apns-topic'] !== fake.topic) return answer(400, 'DeviceTokenNotForTopic')
    const collapse = headers['apns-collapse-id']
    if (typeof collapse === 'string' && Buffer.byteLength(collapse) > 64)
      return answer(400, 'BadCollapseId')
    if (Buffer.byteLength(body) > MAX_BODY) return answer(413, 'PayloadTooLarge')
    const token = path[1]
    if (!/^[0-9a-f]{64,200}$/.test(token)) return answer(400, 'BadDeviceToken')
    let payload: Record<string, any>
    try {
      payload = JSON.parse(body)
    } catch {
      return answer(400, 'PayloadEmpty')
    }
    if (!payload?.aps) return answer(400, 'PayloadEmpty')
    if (fake.unregistered.has(token)) return answer(410, 'Unregistered')
    fake.received.push({ token, headers, payload })
    answer(200)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key: await exportPKCS8(privateKey as CryptoKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Quire keeps its HTTP/2 session open (as with Apple): end it so close completes.
        for (const session of sessions) session.destroy()
      }),
  })
  return fake
}

/** A browser's side of a Web Push subscription: what updatePushId takes, and its private keys. */
export interface BrowserSubscription {
  id: string
  /** PushSubscription.toJSON() as a browser gives it (expirationTime included). */
  json: string
  endpoint: string
  ecdh: ECDH
  publicKey: Buffer
  auth: Buffer
}

export interface WebPushReceived {
  subscriptionId: string
  headers: http.IncomingHttpHeaders
  /** The decrypted notification (JSON). */
  payload: Record<string, any>
}

export interface FakeWebPush {
  url: string
  /** The VAPID key pair and subject Quire is to be configured with. */
  vapid: { publicKey: string; privateKey: string; subject: string }
  /** A new browser subscription (keys made as a browser makes them). */
  subscribe(): BrowserSubscription
  received: WebPushReceived[]
  rejected: string[]
  /** Subscription ids answered 410 Gone / 404 Not Found. */
  gone: Set<string>
  missing: Set<string>
  close(): Promise<void>
}

/** RFC 8291 §3.4 and RFC 8188: one aes128gcm record opened with the browser's private key. */
function decryptAes128gcm(body: Buffer, browser: BrowserSubscription): string {
  if (body.length < 21) throw new Error('shorter than the aes128gcm header')
  const salt = body.subarray(0, 16)
  const recordSize = body.readUInt32BE(16)
  const idLength = body[20]
  if (idLength !== 65) throw new Error(`keyid is ${idLength} bytes, not the sender's 65-byte key`)
  const senderPublic = body.subarray(21, 21 + idLength)
  const record = body.subarray(21 + idLength)
  if (record.length > recordSize || record.length < 17) throw new Error('not one record')
  const shared = browser.ecdh.computeSecret(senderPublic)
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), browser.publicKey, senderPublic])
  const ikm = Buffer.from(hkdfSync('sha256', shared, browser.auth, keyInfo, 32))
  const derive = (info: string, length: number) =>
    Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from(`Content-Encoding: ${info}\0`), length))
  const decipher = createDecipheriv('aes-128-gcm', derive('aes128gcm', 16), derive('nonce', 12))
  decipher.setAuthTag(record.subarray(-16))
  const padded = Buffer.concat([decipher.update(record.subarray(0, -16)), decipher.final()])
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('no last-record delimiter (0x02)')
  return padded.subarray(0, end).toString('utf8')
}

/**
 * A local Web Push service (RFC 8030) as browsers' push services behave:
 * checks the VAPID Authorization (RFC 8292: `vapid t=<JWT>, k=<key>`, the
 * key the subscription was made with, the JWT ES256-signed by it, aud =
 * the endpoint's origin, exp within 24 h, a mailto:/https: sub), TTL,
 * Content-Encoding aes128gcm, at most 4096 bytes and a Topic's form, then
 * decrypts the payload with the subscription's private key (RFC 8291).
 * Answers 201, or 404/410 for subscriptions a test made gone. Loopback only.
 */
export async function startFakeWebPush(): Promise<FakeWebPush> {
  const keys = webpush.generateVAPIDKeys()
  const publicKey = Buffer.from(keys.publicKey, 'base64url')
  const verifyKey = await importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: publicKey.subarray(1, 33).toString('base64url'),
      y: publicKey.subarray(33, 65).toString('base64url'),
    },
    'ES256'
  )
  const browsers = new Map<string, BrowserSubscription>()
  const fake = {
    vapid: { ...keys, subject: 'mailto:push-tests@quire.test' },
    received: [],
    rejected: [],
    gone: new Set<string>(),
    missing: new Set<string>(),
  } as unknown as FakeWebPush
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const answer = (status: number, why?: string) => {
      if (why) fake.rejected.push(why)
      response.writeHead(status, { 'content-type': 'text/plain' })
      response.end(why ?? '')
    }
    const id = /^\/push\/([\w-]+)$/.exec(request.url ?? '')?.[1]
    const browser = id ? browsers.get(id) : undefined
    if (request.method !== 'POST' || !id || !browser) return answer(404, `no ${request.url}`)
    const vapid = /^vapid t=([\w.-]+),\s*k=([\w-]+)$/.exec(request.headers.authorization ?? '')
    if (!vapid) return answer(401, 'no VAPID authorization')
    if (vapid[2] !== keys.publicKey) return answer(403, 'k is not the key the subscription has')
    try {
      const { payload } = await jwtVerify(vapid[1], verifyKey, {
        algorithms: ['ES256'],
        audience: fake.url,
      })
      if (!payload.exp || payload.exp > Date.now() / 1000 + 24 * 3600)
        return answer(403, 'exp more than 24 hours ahead')
      if (!/^(mailto:|https:)/.test(String(payload.sub))) return answer(403, 'bad sub')
    } catch (error) {
      return answer(403, `VAPID JWT refused: ${(error as Error).message}`)
    }
    if (!/^\d+$/.test(String(request.headers.ttl ?? ''))) return answer(400, 'no TTL')
    if (request.headers['content-encoding'] !== 'aes128gcm')
      return answer(415, 'Content-Encoding is not aes128gcm')
    if (body.length > 4096) return answer(413, 'payload above 4096 bytes')
    const topic = request.headers.topic
    if (topic !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(String(topic)))
      return answer(400, 'bad Topic')
    let payload: Record<string, any>
    try {
      payload = JSON.parse(decryptAes128gcm(body, browser))
    } catch (error) {
      return answer(400, `payload not decrypted: ${(error as Error).message}`)
    }
    if (fake.gone.has(id)) return answer(410)
    if (fake.missing.has(id)) return answer(404)
    fake.received.push({ subscriptionId: id, headers: request.headers, payload })
    response.writeHead(201, { location: `${fake.url}/message/${fake.received.length}` })
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    subscribe: () => {
      const ecdh = createECDH('prime256v1')
      ecdh.generateKeys()
      const subscriptionId = randomBytes(12).toString('base64url')
      const browser = {
        id: subscriptionId,
        endpoint: `${fake.url}/push/${subscriptionId}`,
        ecdh,
        publicKey: ecdh.getPublicKey(),
        auth: randomBytes(16),
      } as BrowserSubscription
      browser.json = JSON.stringify({
        endpoint: browser.endpoint,
        expirationTime: null,
        keys: {
          p256dh: browser.publicKey.toString('base64url'),
          auth: browser.auth.toString('base64url'),
        },
      })
      browsers.set(subscriptionId, browser)
      return browser
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  })
  return fake
}
