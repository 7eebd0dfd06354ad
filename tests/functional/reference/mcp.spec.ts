import { test } from '@japa/runner'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { serverUrl } from '#tests/helpers/server'
import { makeUser, login, type Session } from '#tests/helpers/users'
import { rpc } from '#tests/helpers/rpc'

/** The SDK's own client, connected to /live/mcp with the session's keys as headers. */
async function connect(headers: Record<string, string>) {
  const client = new Client({ name: 'quire-tests', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${serverUrl()}/live/mcp`), {
    requestInit: { headers },
  })
  await client.connect(transport)
  return client
}

const sessionHeaders = (session: Session) => ({
  'X-Quire-O-U': session.o_u,
  'X-Quire-Sesskey': session.sesskey,
})

/** A tool's answer: the api.php envelope it carries as text. */
function envelopeOf(result: any): Record<string, any> {
  return JSON.parse(result.content[0].text)
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return envelopeOf(await client.callTool({ name, arguments: args }))
}

test.group('MCP endpoint', (group) => {
  const open: Client[] = []
  group.each.teardown(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()))
  })

  test('lists one tool per operation a session may call, with its JSON schema and description', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const client = await connect(sessionHeaders(session))
    open.push(client)
    const { tools } = await client.listTools()
    const names = tools.map((tool) => tool.name)
    assert.includeMembers(names, ['getAllBooks', 'sendMsg', 'getTableValues', 'createBook'])
    // Not a session's: no-session operations, gateways' operations, file uploads.
    for (const name of ['createAppkey', 'createOauthkey', 'getGatewayOutbox', 'fileUpload']) {
      assert.notInclude(names, name)
    }
    const getTableValues = tools.find((tool) => tool.name === 'getTableValues')!
    assert.equal(getTableValues.inputSchema.type, 'object')
    assert.deepEqual(getTableValues.inputSchema.required, ['catId'])
    assert.deepInclude((getTableValues.inputSchema.properties as any).catId, { type: 'integer' })
    assert.include(getTableValues.description, 'Nok codes:')
  })

  test('calls getAllBooks, sendMsg and getTableValues through the dispatcher', async ({
    assert,
  }) => {
    const user = await makeUser()
    const session = await login(user)
    const client = await connect(sessionHeaders(session))
    open.push(client)

    const created = await call(client, 'createBook', { b_c: 'mcpbook', title: 'MCP' })
    assert.equal(created.status, 'ok', JSON.stringify(created))
    const books = await call(client, 'getAllBooks')
    assert.equal(books.status, 'ok', JSON.stringify(books))
    assert.equal(books.req, 'getAllBooks')
    assert.include(
      books.allBooks.books.map((book: any) => book.b_c),
      'mcpbook'
    )

    const sent = await call(client, 'sendMsg', {
      b_o: user.code,
      b_c: 'mcpbook',
      msg: 'from an agent',
    })
    assert.equal(sent.status, 'ok', JSON.stringify(sent))
    // The message is there for api.php as well.
    const messages = await rpc({
      req: 'getBookMessages',
      o_u: session.o_u,
      sesskey: session.sesskey,
      b_o: user.code,
      b_c: 'mcpbook',
    })
    assert.deepEqual(
      messages.body.bookMessages.map((message: any) => message.msg),
      ['from an agent']
    )

    const table = await call(client, 'createTable', {
      b_o: user.code,
      b_c: 'mcpbook',
      name: 'People',
    })
    assert.equal(table.status, 'ok', JSON.stringify(table))
    const field = await call(client, 'createField', {
      b_o: user.code,
      catId: table.catId,
      name: 'Name',
      type: 'shorttext',
    })
    assert.equal(field.status, 'ok', JSON.stringify(field))
    const written = await call(client, 'updateTableValue', {
      b_o: user.code,
      rowId: 'tmp1',
      fieldId: field.fieldId,
      value: 'Ada Lovelace',
    })
    assert.equal(written.status, 'ok', JSON.stringify(written))
    const values = await client.callTool({
      name: 'getTableValues',
      arguments: { b_o: user.code, catId: table.catId },
    })
    assert.isNotTrue(values.isError)
    const envelope = envelopeOf(values)
    assert.equal(envelope.status, 'ok')
    assert.equal(envelope.catId, table.catId)
    assert.include(JSON.stringify(envelope.tableValues), 'Ada Lovelace')
  })

  test('bad arguments answer the nok envelope api.php answers, as a tool error', async ({
    assert,
  }) => {
    const session = await login(await makeUser())
    const client = await connect(sessionHeaders(session))
    open.push(client)
    const result = await client.callTool({ name: 'getTableValues', arguments: { catId: 'abc' } })
    assert.isTrue(result.isError)
    const viaMcp = envelopeOf(result)
    const viaApi = await rpc({ req: 'getTableValues', ...session, catId: 'abc' })
    assert.equal(viaMcp.errorCode, 'INVALID_PARAMETER')
    assert.equal(viaMcp.errorCode, viaApi.body.errorCode)
    assert.equal(viaMcp.errorMsg, viaApi.body.errorMsg)
  })

  test("applies the session's restrictions exactly as api.php", async ({ assert }) => {
    const user = await makeUser()
    const owner = await login(user)
    await rpc({ req: 'createBook', ...owner, b_c: 'kept' })
    await rpc({ req: 'createBook', ...owner, b_c: 'other' })

    // A read-only session that hides tables: no write tool, no tables tool.
    const readOnly = await login(user, {
      restrictions: JSON.stringify({ readonly: 1, hideTables: 1 }),
    })
    const limited = await connect(sessionHeaders(readOnly))
    open.push(limited)
    const { tools } = await limited.listTools()
    const names = tools.map((tool) => tool.name)
    assert.include(names, 'getAllBooks')
    assert.notInclude(names, 'sendMsg')
    assert.notInclude(names, 'getTableValues')
    const refused = await limited.callTool({
      name: 'sendMsg',
      arguments: { b_c: 'kept', msg: 'x' },
    })
    assert.isTrue(refused.isError)

    // A session kept to one book: the dispatcher's verdict, the same as on api.php.
    const oneBook = await login(user, {
      restrictions: JSON.stringify({ carnet_owner: user.code, carnet_code: 'kept' }),
    })
    const kept = await connect(sessionHeaders(oneBook))
    open.push(kept)
    const args = { b_o: user.code, b_c: 'other', msg: 'not here' }
    const viaMcp = await call(kept, 'sendMsg', args)
    const viaApi = await rpc({ req: 'sendMsg', ...oneBook, ...args })
    assert.equal(viaApi.body.status, 'nok')
    assert.equal(viaMcp.errorCode, viaApi.body.errorCode)
    assert.equal(viaMcp.errorCode, 'RESTRICTED_SESSION')
    const inKept = await call(kept, 'sendMsg', { ...args, b_c: 'kept' })
    assert.equal(inKept.status, 'ok')
  })

  test('refuses a missing or wrong sesskey with 401, and takes an oauthkey', async ({ assert }) => {
    const user = await makeUser()
    const session = await login(user)
    const wrong = await fetch(`${serverUrl()}/live/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Accept': 'application/json, text/event-stream',
        'X-Quire-O-U': session.o_u,
        'X-Quire-Sesskey': 'nope',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    assert.equal(wrong.status, 401)
    const refusal: any = await wrong.json()
    assert.equal(refusal.error.data.errorCode, 'INVALID_SESSKEY')
    await assert.rejects(() => connect({ 'X-Quire-O-U': session.o_u }))

    const viaOauthkey = await connect({
      'X-Quire-O-U': session.o_u,
      'X-Quire-Oauthkey': session.oauthkey,
    })
    open.push(viaOauthkey)
    const books = await call(viaOauthkey, 'getAllBooks')
    assert.equal(books.status, 'ok')
    const bearer = await connect({
      'X-Quire-O-U': session.o_u,
      'Authorization': `Bearer ${session.sesskey}`,
    })
    open.push(bearer)
    const info = await call(bearer, 'getUserInfo')
    assert.equal(info.status, 'ok')
  })
})
