import { test } from '@japa/runner'
import { mkdirSync } from 'node:fs'
import { uploadDir } from '#core/rpc/upload_temp'
import { serverUrl } from '#tests/helpers/server'
import {
  BOUNDARY,
  TRUNCATED_FILE_BODY,
  cutAfter,
  multipartBody,
  postRaw,
  tempFiles,
  type RawAnswer,
} from '#tests/helpers/multipart'
import { answerProblems, credentials, makeWorld, watchErrors } from './fuzz_kit.js'

/**
 * npm run test:fuzz, multipart half (issue 18 items 1 and 2) — bodies cut short or malformed
 * and clients gone in the middle of a file part, to api.php and to the /dbi URLs that read a
 * POST body. Every request gets its answer (api.php: a documented nok, HTTP 200 JSON; /dbi: a
 * status below 500), no promise is left rejected unhandled (one would end `npm start`), the
 * server still answers afterwards, nothing reaches the error log, and no temp file of this
 * process is left in the upload folder (shared with other runs: ours are `<pid>-...`).
 */

const text = (value: string) => Buffer.from(value)
const head = (disposition: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n`
const FILE_HEAD = head('name="qqfile"; filename="a.txt"')

/** Bodies that are complete HTTP (exact Content-Length) and broken multipart. */
const BODIES: [string, Buffer, string?][] = [
  ['file part, no closing boundary (the issue)', TRUNCATED_FILE_BODY],
  ['file part cut inside the boundary', text(`${FILE_HEAD}hello\r\n-`)],
  ['file part then a half boundary', text(`${FILE_HEAD}hello\r\n--`)],
  ['field cut in its value', text(`${head('name="req"')}fileUp`)],
  ['part headers cut', text(`--${BOUNDARY}\r\nContent-Disposition: form-da`)],
  ['boundary only', text(`--${BOUNDARY}`)],
  ['empty body', Buffer.alloc(0)],
  ['malformed part header', text(`--${BOUNDARY}\r\nGarbage\r\n\r\nx\r\n--${BOUNDARY}--\r\n`)],
  [
    'req=fileUpload, then a cut file part',
    Buffer.concat([
      multipartBody([{ name: 'req', value: 'fileUpload' }], false),
      text(`\r\n${FILE_HEAD}abc`),
    ]),
  ],
  [
    'a whole file part, then a cut one',
    Buffer.concat([
      multipartBody([{ name: 'qqfile', filename: 'a.txt', bytes: 'first' }], false),
      text(`\r\n${FILE_HEAD}second`),
    ]),
  ],
  ['UTF-8 file name, no closing boundary', text(`${head('name="qqfile"; filename="ä€😀.txt"')}x`)],
  [
    'more file parts than allowed',
    multipartBody(
      Array.from({ length: 101 }, () => ({ name: 'qqfile', filename: 'e.txt', bytes: '' }))
    ),
  ],
  ['no boundary parameter', TRUNCATED_FILE_BODY, 'multipart/form-data'],
  ['another boundary', TRUNCATED_FILE_BODY, 'multipart/form-data; boundary=zz'],
]

/** api.php by every way the operation may be known (or not), and the /dbi forms that read a body. */
const API_PATHS = ['/live/api.php', '/live/api.php?req=fileUpload', '/dev/api.php?r=getAllBooks']
const MEDIA_PATHS = ['/live/dbi/ic/norm/someone/book/1/1', '/live/dbi/ui/tb/someone/1']

test.group('fuzz: broken multipart bodies and vanished clients', (group) => {
  let errors: Awaited<ReturnType<typeof watchErrors>>
  const unhandled: unknown[] = []
  const record = (reason: unknown) => unhandled.push(reason)
  mkdirSync(uploadDir(), { recursive: true })
  const temp = tempFiles(uploadDir(), (name) => name.startsWith(`${process.pid}-`))

  group.setup(async () => {
    errors = await watchErrors()
    process.on('unhandledRejection', record)
    return () => {
      process.off('unhandledRejection', record)
      errors.restore()
    }
  })

  /** The server answers an ordinary call, and nothing went wrong behind the answers. */
  async function assertHealthy(assert: any, session: Parameters<typeof credentials>[0]) {
    const after = await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ req: 'getAllBooks', ...credentials(session) }).toString(),
    })
    assert.equal(((await after.json()) as any).status, 'ok')
    await temp.untilNone('after the cases')
    assert.deepEqual(unhandled.splice(0).map(String), [], 'unhandled rejections')
    assert.deepEqual(errors.take().slice(0, 3), [], 'errors in the server log')
  }

  test('every broken body gets its answer, on every path', async ({ assert }) => {
    const world = await makeWorld()
    errors.take()
    const failures: string[] = []
    for (const [what, body, contentType] of BODIES) {
      for (const path of [...API_PATHS, ...MEDIA_PATHS]) {
        let answer: RawAnswer
        try {
          answer = await postRaw(serverUrl(), path, body, contentType)
        } catch (error) {
          failures.push(`${what} -> ${path}: no answer (${(error as Error).message})`)
          continue
        }
        if (path.includes('api.php')) {
          let decoded: Record<string, any>
          try {
            decoded = JSON.parse(answer.text)
          } catch {
            decoded = { unparsable: answer.text }
          }
          const problems = answerProblems({
            status: answer.status,
            contentType: String(answer.headers['content-type'] ?? ''),
            body: decoded,
            text: answer.text,
          })
          if (problems.length) failures.push(`${what} -> ${path}: ${problems.join(', ')}`)
        } else if (answer.status >= 500) failures.push(`${what} -> ${path}: HTTP ${answer.status}`)
      }
    }
    assert.deepEqual(failures, [])
    await assertHealthy(assert, world.session)
  }).timeout(120_000)

  test('a client gone in the middle of a file part, on every path', async ({ assert }) => {
    const world = await makeWorld()
    errors.take()
    const part = Buffer.concat([text(FILE_HEAD), Buffer.alloc(8192, 'x')])
    const auth = `o_u=${world.session.o_u}&sesskey=${world.session.sesskey}`
    for (const path of [...API_PATHS, ...MEDIA_PATHS]) {
      const target = `${path}${path.includes('?') ? '&' : '?'}${auth}`
      // Where the part is written (fileUpload, or no operation named yet), the cut comes once it
      // is on disk; elsewhere once the server has read the part's start (nothing to wait for).
      const writes = path === '/live/api.php' || path.includes('fileUpload')
      await cutAfter(serverUrl(), target, part, part.length + 100_000, async () => {
        if (writes) await temp.untilSome(path)
      })
      await temp.untilNone(path)
    }
    await assertHealthy(assert, world.session)
  }).timeout(120_000)
})
