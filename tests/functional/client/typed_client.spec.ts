import { test } from '@japa/runner'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { QuireClient, QuireError, TransportError, type QuireSocket } from '#client/index'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { makeBook } from '#plugins/tables/tests/helpers/tables'
import { ensureSocketEndpoint } from '#tests/functional/socket/socket_client'

/**
 * A TCP relay on loopback in front of the test server: counts connections,
 * can cut the next ones at once (a transport failure the client sees as a
 * reset) and cut every open one (a dropped socket).
 */
async function relay() {
  const target = new URL(serverUrl())
  const open = new Set<net.Socket>()
  const state = { connections: 0, cutNext: 0 }
  const server = net.createServer((incoming) => {
    state.connections++
    if (state.cutNext > 0) {
      state.cutNext--
      incoming.resetAndDestroy()
      return
    }
    const outgoing = net.connect(Number(target.port), target.hostname)
    open.add(incoming)
    incoming.on('close', () => open.delete(incoming))
    incoming.pipe(outgoing).pipe(incoming)
    incoming.on('error', () => outgoing.destroy())
    outgoing.on('error', () => incoming.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    cutAll: () => open.forEach((socket) => socket.resetAndDestroy()),
    close: () => {
      open.forEach((socket) => socket.destroy())
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function loggedIn(baseUrl = serverUrl()) {
  const user = await makeUser()
  const client = new QuireClient({ baseUrl, retryDelayMs: 10 })
  await client.login({ appname: 'client-test', login: user.email!, password: TEST_PASSWORD })
  return { user, client }
}

/**
 * A client of the same session through the relay: its first request opens the
 * relay's first connection (no kept-alive connection of an earlier call).
 */
async function behind(front: { url: string }) {
  const { client } = await loggedIn()
  return new QuireClient({ baseUrl: front.url, retryDelayMs: 10, credentials: client.credentials! })
}

test.group('Typed client: key flow and operations', () => {
  test('login holds o_u (the user code, not the e-mail), u_c and a sesskey; typed calls use them', async ({
    assert,
  }) => {
    const { user, client } = await loggedIn()
    const keys = client.credentials!
    assert.equal(keys.o_u, user.code)
    assert.equal(keys.u_c, user.code)
    assert.isString(keys.sesskey)
    assert.isString(keys.oauthkey)
    const info = await client.getUserInfo()
    assert.equal(info.status, 'ok')
    assert.equal(info.req, 'getUserInfo')
    const books = await client.getAllBooks()
    assert.isArray(books.allBooks.books)
  })

  test('a nok throws QuireError with its documented errorCode, and is never retried', async ({
    assert,
  }) => {
    const front = await relay()
    try {
      const { client } = await loggedIn(front.url)
      const before = front.state.connections
      const error = await client.getBookInfo({ b_o: 'nobody', b_c: 'nothing' }).catch((e) => e)
      assert.instanceOf(error, QuireError)
      assert.oneOf((error as QuireError).errorCode, ['NOT_FOUND', 'FORBIDDEN'])
      assert.equal((error as QuireError).answer.status, 'nok')
      // One request at most (a kept-alive connection may serve it: then none is opened).
      assert.isAtMost(front.state.connections - before, 1)
    } finally {
      await front.close()
    }
  })

  test('useOauthkey + openSession opens another session; a dropped session answers INVALID_SESSKEY', async ({
    assert,
  }) => {
    const { client } = await loggedIn()
    const first = client.credentials!
    const other = new QuireClient({ baseUrl: serverUrl() })
    other.useOauthkey({ o_u: first.o_u, oauthkey: first.oauthkey! })
    const second = await other.openSession({ restrictions: { readonly: true } })
    assert.notEqual(second.sesskey, first.sesskey)
    const refused = await other.createBook({ b_c: 'nope', title: 'Read only' }).catch((e) => e)
    assert.instanceOf(refused, QuireError)
    assert.equal((refused as QuireError).errorCode, 'READONLY_SESSION')

    // dropAllSessions keeps the caller's session and drops the others.
    await client.dropAllSessions()
    const kept = await client.getUserInfo()
    assert.equal(kept.status, 'ok')
    const dropped = await other.getUserInfo().catch((e) => e)
    assert.instanceOf(dropped, QuireError)
    assert.oneOf((dropped as QuireError).errorCode, ['INVALID_SESSKEY', 'SESSION_EXPIRED'])
  })

  test('call() answers the raw envelope, ok or nok, without throwing', async ({ assert }) => {
    const { client } = await loggedIn()
    const ok = await client.call('getUserInfo')
    assert.equal(ok.status, 'ok')
    const nok = await client.call('noSuchOperation')
    assert.equal(nok.status, 'nok')
    assert.equal(nok.errorCode, 'UNKNOWN_OPERATION')
    const viaJson = await client.call('getUserInfo', {}, { form: 'json' })
    assert.equal(viaJson.status, 'ok')
  })
})

test.group('Typed client: retries on transport errors only', () => {
  test('a read cut by the network is retried and answers', async ({ assert }) => {
    const front = await relay()
    try {
      const client = await behind(front)
      front.state.cutNext = 2
      const before = front.state.connections
      const answer = await client.getUserInfo()
      assert.equal(answer.status, 'ok')
      assert.equal(front.state.connections - before, 3, 'two cut, the third answered')
    } finally {
      await front.close()
    }
  })

  test('a write cut after connecting is not retried (it may have run): TransportError', async ({
    assert,
  }) => {
    const front = await relay()
    try {
      const client = await behind(front)
      front.state.cutNext = 1
      const before = front.state.connections
      const error = await client.createBook({ b_c: 'cut', title: 'Cut' }).catch((e) => e)
      assert.instanceOf(error, TransportError)
      assert.equal(front.state.connections - before, 1)
      // The next call goes through.
      const book = await client.createBook({ b_c: `ok${Date.now().toString(36)}`, title: 'Ok' })
      assert.equal(book.status, 'ok')
    } finally {
      await front.close()
    }
  })

  test('retries give up after the number allowed', async ({ assert }) => {
    const front = await relay()
    try {
      const client = await behind(front)
      front.state.cutNext = 10
      const before = front.state.connections
      const error = await client.getUserInfo({}, { retries: 1 }).catch((e) => e)
      assert.instanceOf(error, TransportError)
      assert.equal(front.state.connections - before, 2)
    } finally {
      front.state.cutNext = 0
      await front.close()
    }
  })
})

test.group('Typed client: socket and uploads', (group) => {
  group.setup(async () => {
    await ensureSocketEndpoint()
  })
  test('socket: attaches, sends a message with its ack, pings, reconnects after a drop', async ({
    assert,
    cleanup,
  }) => {
    const front = await relay()
    cleanup(() => front.close())
    const book = await makeBook()
    const client = new QuireClient({ baseUrl: front.url })
    await client.login({ login: book.owner.email!, password: TEST_PASSWORD })
    const socket: QuireSocket = await client.socket({ reconnectDelayMs: 20 })
    cleanup(() => socket.close())
    assert.isTrue(socket.attached)

    const ack = await socket.sendFrame('type1', {
      b_o: book.b_o,
      b_c: book.b_c,
      msg: 'hello from the typed client',
      smid: 0,
    })
    assert.equal(ack!.type, 2)
    assert.equal(ack!.status, 'ok')
    assert.isAbove(Number(ack!.smid), 0)

    const pong = await socket.ping()
    assert.equal(pong!.type, 10)

    const refused = await socket
      .sendFrame('type1', { b_o: book.b_o, b_c: 'no-such-book', msg: 'x', smid: 0 })
      .catch((e) => e)
    assert.instanceOf(refused, QuireError)

    // A dropped connection: the socket reconnects and attaches again by itself.
    const reattached = socket.next(8, 10_000)
    front.cutAll()
    await reattached
    assert.isTrue(socket.attached)
    const again = await socket.ping()
    assert.equal(again!.type, 10)

    const messages = await client.getBookMessages({ b_o: book.b_o, b_c: book.b_c })
    assert.include(JSON.stringify(messages.bookMessages), 'hello from the typed client')
  })

  test('fileUpload sends the file as qqfile; tusUpload attaches through the tus endpoint', async ({
    assert,
  }) => {
    const book = await makeBook()
    const client = new QuireClient({ baseUrl: serverUrl() })
    await client.login({ login: book.owner.email!, password: TEST_PASSWORD })
    const sent = await client.sendMsg({ b_o: book.b_o, b_c: book.b_c, msg: 'files' })
    const smid = Number(sent.createMessageId)

    const bytes = Buffer.from('%PDF-1.4\n% a small document\n')
    const uploaded = await client.fileUpload(
      { b_o: book.b_o, b_c: book.b_c, smid },
      { data: bytes, name: 'note.pdf', type: 'application/pdf' }
    )
    assert.equal(uploaded.status, 'ok')
    assert.equal(Number(uploaded.smid), smid)

    const missing = await client.fileUpload({ b_o: book.b_o, b_c: book.b_c, smid }).catch((e) => e)
    assert.instanceOf(missing, QuireError)

    const big = Buffer.alloc(300_000, 0x41)
    let progress = 0
    const result = await client.tusUpload(
      big,
      { b_o: book.b_o, b_c: book.b_c, smid },
      {
        filename: 'big.txt',
        filetype: 'text/plain',
        chunkSize: 100_000,
        onProgress: (done) => (progress = done),
      }
    )
    assert.equal(result.status, 'ok')
    assert.equal(Number(result.smid), smid)
    assert.equal(progress, big.length)
    assert.match(result.uploadUrl, /\/live\/upload\//)
  })
})
