import { test } from '@japa/runner'
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onMysql } from '#tests/helpers/database'
import {
  TRUNCATED_FILE_BODY,
  cutAfter,
  multipartBody,
  postRaw,
  tempFiles,
  type Part,
} from '#tests/helpers/multipart'
import { waitFor } from '#tests/helpers/queue'
import { ace, signIn, startQuire, type QuireProcess } from '../../../bench/lib/quire_process.js'
import { childEnv } from '#tests/helpers/child_env'

/**
 * api.php's multipart bodies (issue 18 items 1 and 2), against a Quire process of its own: an
 * unhandled rejection ends that process, as it would `npm start`, where the suite's in-process
 * server would not show it; and its TMPDIR is its own, so its temp upload folder
 * (`quire-uploads/`) holds only what this test made. Its fileUpload limit is small
 * (MEDIA_MAX_UPLOAD_BYTES), to go past it cheaply.
 */

const LIMIT = 64 * 1024
const PASSWORD = 'multipart-password'
/** Planted before the start: one untouched for two hours (a leftover), one just written. */
const OLD_LEFTOVER = 'old-leftover'
const FRESH_FILE = 'fresh-file'

let server: QuireProcess
let uploads = ''
/** The child's temp files: its folder is its own, so every name but the planted ones. */
let temp: ReturnType<typeof tempFiles>
let session: { o_u: string; sesskey: string }

async function call(params: Record<string, string>) {
  const response = await fetch(`${server.url}/live/api.php`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  })
  return (await response.json()) as Record<string, any>
}

const credentials = () => ({ o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey })

/** The server still answers: the process lives, and api.php and /health work. */
async function assertAlive(assert: any) {
  assert.isNull(server.child.exitCode, 'the server process ended')
  const health = await fetch(`${server.url}/health`)
  assert.equal(health.status, 200)
  const answer = await call({ req: 'getAllBooks', ...credentials() })
  assert.equal(answer.status, 'ok', JSON.stringify(answer))
}

/** A message to upload to, in a book of the test user's. */
async function messageTarget() {
  const bookCode = `mp${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`
  const book = await call({ req: 'createBook', b_c: bookCode, ...credentials() })
  if (book.status !== 'ok') throw new Error(JSON.stringify(book))
  const sent = await call({
    req: 'sendMsg',
    b_o: session.o_u,
    b_c: bookCode,
    msg: 'files',
    ...credentials(),
  })
  if (sent.status !== 'ok') throw new Error(JSON.stringify(sent))
  return { b_o: session.o_u, b_c: bookCode, smid: String(sent.createMessageId) }
}

const fields = (params: Record<string, string>): Part[] =>
  Object.entries(params).map(([name, value]) => ({ name, value }))
const file = (size: number, name = 'qqfile'): Part => ({
  name,
  filename: 'a.txt',
  bytes: Buffer.alloc(size, 'x'),
})

test.group('api.php multipart bodies, on a server process of its own', (group) => {
  let tmp = ''
  // Two setup steps, each undone by its own cleanup: a failed start still removes the folder.
  group.setup(() => {
    tmp = mkdtempSync(join(tmpdir(), 'quire-multipart-'))
    uploads = join(tmp, 'quire-uploads')
    mkdirSync(uploads)
    mkdirSync(join(tmp, 'data'))
    temp = tempFiles(uploads, (name) => name !== OLD_LEFTOVER && name !== FRESH_FILE)
    writeFileSync(join(uploads, OLD_LEFTOVER), 'left by a killed process')
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    utimesSync(join(uploads, OLD_LEFTOVER), twoHoursAgo, twoHoursAgo)
    writeFileSync(join(uploads, FRESH_FILE), 'being written by another instance')
    return () => rmSync(tmp, { recursive: true, force: true })
  })
  group.setup(async () => {
    const env = childEnv({
      DATA_DIR: join(tmp, 'data'),
      TMPDIR: tmp,
      MEDIA_MAX_UPLOAD_BYTES: String(LIMIT),
    })
    if (!onMysql()) ace(env, 'migration:run', '--force')
    const code = `mp${Date.now().toString(36)}`
    ace(env, 'user:create', code, `${code}@example.test`, PASSWORD)
    server = await startQuire(env)
    server.child.stdout?.resume()
    session = await signIn(server.url, `${code}@example.test`, PASSWORD)
    return () => server.stop()
  })

  test('the start sweeps a leftover untouched for an hour and keeps a fresh file', async ({
    assert,
  }) => {
    await waitFor(
      () => !existsSync(join(uploads, OLD_LEFTOVER)),
      10_000,
      'the old leftover to be swept'
    )
    assert.isTrue(existsSync(join(uploads, FRESH_FILE)))
  })

  test("a truncated file part (the issue's body) answers nok and the server lives on", async ({
    assert,
  }) => {
    for (const path of ['/live/api.php', '/live/api.php?req=fileUpload']) {
      const answer = await postRaw(server.url, path, TRUNCATED_FILE_BODY)
      assert.equal(answer.status, 200)
      assert.equal(answer.headers['content-type'], 'application/json')
      const body = JSON.parse(answer.text)
      assert.equal(body.status, 'nok')
      assert.equal(body.errorCode, 'INVALID_PARAMETER')
      assert.include(body.errorMsg, 'Malformed multipart body')
    }
    await assertAlive(assert)
    await temp.untilNone('truncated body')
  }).timeout(60_000)

  test('the same body to a /dbi URL is refused and the server lives on', async ({ assert }) => {
    const answer = await postRaw(
      server.url,
      `/live/dbi/ic/norm/${session.o_u}/book/1/1`,
      TRUNCATED_FILE_BODY
    )
    // Without a readable session in the body, a session-bound form is 403.
    assert.equal(answer.status, 403)
    await assertAlive(assert)
  }).timeout(60_000)

  test('a client gone in the middle of a file part leaves no temp file', async ({ assert }) => {
    const head = multipartBody([file(4096)], false)
    await cutAfter(
      server.url,
      `/live/api.php?req=fileUpload&o_u=${session.o_u}&sesskey=${session.sesskey}`,
      head,
      head.length + 10_000,
      // The part reached the disk: the cut happens while its temp file is open.
      () => temp.untilSome('fileUpload part')
    )
    await temp.untilNone('cut upload')
    await assertAlive(assert)
  }).timeout(60_000)

  test('a complete upload and a refused one leave no temp file', async ({ assert }) => {
    const target = await messageTarget()
    const watcher = temp.watch()
    try {
      const done = await postRaw(
        server.url,
        '/live/api.php',
        multipartBody([...fields({ req: 'fileUpload', ...credentials(), ...target }), file(1000)])
      )
      assert.equal(JSON.parse(done.text).status, 'ok', done.text)
      assert.deepEqual(await temp.list(), [])

      const refused = await postRaw(
        server.url,
        '/live/api.php',
        multipartBody([
          ...fields({ req: 'fileUpload', ...credentials(), sesskey: 'wrong', ...target }),
          file(1000),
        ])
      )
      assert.equal(JSON.parse(refused.text).status, 'nok', refused.text)
      assert.deepEqual(await temp.list(), [])
      // Both parts were written (fileUpload takes files): their files existed, and are gone.
      await waitFor(() => watcher.seen.size >= 2, 5000, 'two temp files seen')
    } finally {
      watcher.close()
    }
  }).timeout(60_000)

  test('a file part for an operation that takes no file is never written', async ({ assert }) => {
    const watcher = temp.watch()
    try {
      const cases: [string, Part[]][] = [
        // Named by the query string, by a field before the part, by `r`; an unknown operation.
        ['/live/api.php?req=getAllBooks', [...fields(credentials()), file(20_000)]],
        ['/live/api.php', [...fields({ req: 'getAllBooks', ...credentials() }), file(20_000)]],
        ['/live/api.php', [...fields({ r: 'getAllBooks', ...credentials() }), file(20_000)]],
        ['/live/api.php?req=noSuchOperation', [file(20_000)]],
      ]
      for (const [path, parts] of cases) {
        const answer = await postRaw(server.url, path, multipartBody(parts))
        const body = JSON.parse(answer.text)
        assert.equal(
          body.errorCode ?? body.status,
          path.includes('noSuch') ? 'UNKNOWN_OPERATION' : 'ok'
        )
      }
      // A fileUpload part after them, on the same watcher: the watch does see a written part.
      await postRaw(server.url, '/live/api.php?req=fileUpload', multipartBody([file(100)]))
      await waitFor(() => watcher.seen.size > 0, 5000, 'the fileUpload part seen')
      assert.equal(watcher.seen.size, 1, [...watcher.seen].join(', '))
      assert.deepEqual(await temp.list(), [])
    } finally {
      watcher.close()
    }
  }).timeout(60_000)

  test('files past the operation limit answer PAYLOAD_TOO_LARGE and leave nothing', async ({
    assert,
  }) => {
    const target = await messageTarget()
    const params = { req: 'fileUpload', ...credentials(), ...target }
    const bodies: [string, Buffer][] = [
      ['one part, operation known first', multipartBody([...fields(params), file(LIMIT + 1)])],
      [
        'two parts summing past the limit',
        multipartBody([...fields(params), file(LIMIT / 2 + 1), file(LIMIT / 2 + 1, 'other')]),
      ],
      // The part comes before `req`: written under the parser's own bound, then checked.
      ['operation named after the part', multipartBody([file(LIMIT + 1), ...fields(params)])],
    ]
    for (const [what, body] of bodies) {
      const answer = await postRaw(server.url, '/live/api.php', body)
      const decoded = JSON.parse(answer.text)
      assert.equal(decoded.status, 'nok', `${what}: ${answer.text}`)
      assert.equal(decoded.errorCode, 'PAYLOAD_TOO_LARGE', what)
      assert.deepEqual(await temp.list(), [], what)
    }
    await assertAlive(assert)
  }).timeout(60_000)
})
