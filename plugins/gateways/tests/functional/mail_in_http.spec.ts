import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { serverUrl } from '#tests/helpers/server'
import { client, book, sharedBook } from '#plugins/books/tests/helpers/books'
import { MailInService } from '#plugins/gateways/services/mail_in/mail_in_service'
import gatewaysConfig from '#plugins/gateways/config'
import {
  MAIL_DOMAIN,
  addressOf,
  footprint,
  lastLog,
  messageRow,
  pdf,
  png,
  rawMail,
  withMailSettings,
} from '../helpers/mail_in.js'

const TOKEN = 'relay-token-for-tests'

/** The relay's request: the raw message as the body, the bearer token, the envelope recipient. */
function relay(
  body: Buffer | string,
  options: { token?: string | null; recipient?: string; contentType?: string } = {}
) {
  const query = options.recipient ? `?recipient=${encodeURIComponent(options.recipient)}` : ''
  const token = options.token === undefined ? TOKEN : options.token
  return fetch(`${serverUrl()}/gateways/mail/inbound${query}`, {
    method: 'POST',
    headers: {
      'Content-Type': options.contentType ?? 'message/rfc822',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body,
  })
}

async function json(response: Response): Promise<Record<string, any>> {
  return (await response.json()) as Record<string, any>
}

/** `node ace mail:ingest` with the message on its standard input. */
function ingestCommand(raw: Buffer, args: string[] = []) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['ace', 'mail:ingest', ...args],
      { cwd: app.makePath(), env: { ...process.env, MAIL_DOMAIN } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr })
    )
    child.stdin!.end(raw)
  })
}

test.group('gateways: e-mail in through the relay webhook', (group) => {
  group.each.setup(() => withMailSettings({ inboundToken: TOKEN, maxBytes: 100_000 }))

  test('a member’s raw message is stored; its Message-ID twice is stored once', async ({
    assert,
  }) => {
    const { members, target } = await sharedBook(2)
    const [member] = members
    const raw = await rawMail({
      from: member.user.email!,
      to: addressOf(target),
      subject: 'From the relay',
      text: 'plain',
    })
    const response = await relay(raw)
    assert.equal(response.status, 200)
    const body = await json(response)
    assert.equal(body.status, 'stored')
    assert.deepInclude(body, { b_o: target.b_o, b_c: target.b_c })
    const row = await messageRow(body.smid)
    assert.equal(row.msg_method, '_mail')
    assert.equal(row.msg_body, 'plain')
    assert.isNull(row.msg_body_html)

    const before = await footprint()
    const again = await json(await relay(raw))
    assert.deepEqual(again, { ...body, status: 'duplicate' })
    const after = await footprint()
    assert.equal(after.messages, before.messages)
    const log = await lastLog()
    assert.equal(log.outcome, 'duplicate')
  })

  test('the same message delivered twice at once is stored once, and the loser’s files are removed', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const raw = await rawMail({
      from: owner.user.email!,
      to: addressOf(target),
      subject: 'twice at once',
      attachments: [{ filename: 'photo.png', content: await png('#cc3333') }],
    })
    const before = await footprint()
    const answers = await Promise.all(
      [relay(raw), relay(raw), relay(raw)].map(async (r) => json(await r))
    )
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [
      'duplicate',
      'duplicate',
      'stored',
    ])
    assert.lengthOf(new Set(answers.map((answer) => answer.smid)), 1)
    const after = await footprint()
    assert.equal(after.messages, before.messages + 1)
    assert.equal(after.media, before.media + 1)
    assert.equal(after.files, before.files + 1)
  })

  test('the envelope recipient wins over the headers; without it, the first book address of To/Cc', async ({
    assert,
  }) => {
    const owner = await client()
    const first = await book(owner)
    const second = await book(owner)
    const raw = await rawMail({
      from: owner.user.email!,
      to: ['someone@elsewhere.test', addressOf(first)],
      cc: addressOf(second),
      subject: 'routing',
      text: 'x',
    })
    const byHeaders = await json(await relay(raw))
    assert.equal(byHeaders.b_c, first.b_c)
    const byEnvelope = await json(await relay(raw, { recipient: addressOf(second) }))
    assert.equal(byEnvelope.b_c, second.b_c)
    assert.equal(byEnvelope.status, 'stored')
  })

  test('refusals answer a 4xx JSON error and store nothing (the refusal is logged)', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const outsider = await client()
    const image = await png()
    const mail = (extra: Record<string, unknown> = {}) =>
      rawMail({ from: owner.user.email!, to: addressOf(target), subject: 's', text: 't', ...extra })
    const cases: [string, () => Promise<Response>, number, string][] = [
      ['garbage', async () => relay('this is not an e-mail at all'), 400, 'MAIL_UNPARSABLE'],
      ['empty body', async () => relay(''), 400, 'MAIL_UNPARSABLE'],
      [
        'no From',
        async () => relay(`To: ${addressOf(target)}\r\nSubject: x\r\n\r\nbody\r\n`),
        400,
        'MAIL_UNPARSABLE',
      ],
      [
        'too large',
        async () =>
          relay(
            await mail({ attachments: [{ filename: 'b.bin', content: Buffer.alloc(150_000, 1) }] })
          ),
        413,
        'MAIL_TOO_LARGE',
      ],
      [
        'not a book address',
        async () => relay(await mail({ to: 'someone@elsewhere.test' })),
        404,
        'MAIL_UNKNOWN_RECIPIENT',
      ],
      [
        'unknown book',
        async () => relay(await mail({ to: `nothere.${owner.code}@${MAIL_DOMAIN}` })),
        404,
        'MAIL_NOT_FOUND',
      ],
      [
        'not a member',
        async () => relay(await mail({ from: outsider.user.email! })),
        404,
        'MAIL_NOT_FOUND',
      ],
      [
        'an auto-reply',
        async () => relay(await mail({ headers: { 'Auto-Submitted': 'auto-replied' } })),
        422,
        'MAIL_AUTOMATIC',
      ],
      [
        'bulk mail',
        async () => relay(await mail({ headers: { Precedence: 'bulk' } })),
        422,
        'MAIL_AUTOMATIC',
      ],
      [
        'corrupt image after a good document',
        async () =>
          relay(
            await mail({
              attachments: [
                { filename: 'ok.pdf', content: pdf() },
                {
                  filename: 'broken.png',
                  content: Buffer.concat([image.subarray(0, 40), Buffer.alloc(60, 9)]),
                },
              ],
            })
          ),
        422,
        'MAIL_ATTACHMENT_REFUSED',
      ],
    ]
    for (const [label, deliver, status, code] of cases) {
      const before = await footprint()
      const response = await deliver()
      assert.equal(response.status, status, label)
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
      const body = await json(response)
      assert.equal(body.error, code, label)
      assert.isString(body.message)
      const after = await footprint()
      assert.deepEqual(after, { ...before, log: before.log + 1 }, label)
      const log = await lastLog()
      assert.equal(log.code, code, label)
    }
  })

  test('an ambiguous address (two books fit it) is refused', async ({ assert }) => {
    // The book `a` of `x.y` and the book `a.x` of `y`: both are a.x.y@.
    const stamp = Date.now().toString(36)
    const dotted = await client()
    const plain = await client()
    await book(dotted, { b_c: 'a' })
    await book(plain, { b_c: 'a.x' })
    await db
      .from('users')
      .where('id', dotted.user.id)
      .update({ code: `x.${stamp}` })
    await db.from('users').where('id', plain.user.id).update({ code: stamp })
    const raw = await rawMail({
      from: plain.user.email!,
      to: `a.x.${stamp}@${MAIL_DOMAIN}`,
      text: 't',
    })
    const response = await relay(raw)
    assert.equal(response.status, 409)
    const body = await json(response)
    assert.equal(body.error, 'MAIL_AMBIGUOUS_ADDRESS')
  })

  test('no token, a wrong token, or no token configured: 401, nothing read', async ({ assert }) => {
    const owner = await client()
    const target = await book(owner)
    const raw = await rawMail({ from: owner.user.email!, to: addressOf(target), text: 't' })
    const before = await footprint()
    for (const token of [null, 'wrong', '']) {
      const response = await relay(raw, { token })
      assert.equal(response.status, 401)
      const body = await json(response)
      assert.equal(body.error, 'MAIL_UNAUTHORIZED')
    }
    gatewaysConfig.mailIn.inboundToken = undefined
    const unset = await relay(raw, { token: TOKEN })
    assert.equal(unset.status, 401)
    assert.deepEqual(await footprint(), before)
  })

  test('past the per-sender limit: 429 with Retry-After, for that sender only', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    // A stranger's address, refused (404) until the limit; each mail counts.
    const stranger = `flood.${randomUUID()}@elsewhere.test`
    const limit = gatewaysConfig.mailIn.ratePerSender
    for (let sent = 0; sent < limit; sent++) {
      const response = await relay(
        await rawMail({ from: stranger, to: addressOf(target), text: 'x' })
      )
      assert.equal(response.status, 404)
    }
    const limited = await relay(await rawMail({ from: stranger, to: addressOf(target), text: 'x' }))
    assert.equal(limited.status, 429)
    const body = await json(limited)
    assert.equal(body.error, 'MAIL_RATE_LIMITED')
    assert.isAbove(Number(limited.headers.get('retry-after')), 0)
    const member = await relay(
      await rawMail({ from: owner.user.email!, to: addressOf(target), text: 'x' })
    )
    assert.equal(member.status, 200)
  })
})

test.group('gateways: e-mail in by node ace mail:ingest', (group) => {
  group.each.setup(() => withMailSettings())

  test('stores the message read on stdin; a refusal exits 1 with the reason and stores nothing', async ({
    assert,
  }) => {
    const { members, target } = await sharedBook(2)
    const [member] = members
    const raw = await rawMail({
      from: member.user.email!,
      to: 'list@elsewhere.test',
      subject: 'by the command',
      text: 'piped',
    })
    const stored = await ingestCommand(raw, ['--to', addressOf(target)])
    assert.equal(stored.code, 0, stored.stderr)
    const log = await lastLog()
    assert.equal(log.source, 'cli')
    assert.equal(log.outcome, 'stored')
    assert.include(stored.stdout, `Stored as message ${log.smid}`)
    const row = await messageRow(Number(log.smid))
    assert.equal(row.msg, 'by the command')

    const before = await footprint()
    const refused = await ingestCommand(raw)
    assert.equal(refused.code, 1)
    assert.include(refused.stdout + refused.stderr, 'MAIL_UNKNOWN_RECIPIENT')
    const after = await footprint()
    assert.deepEqual(after, { ...before, log: before.log + 1 })
  }).timeout(60_000)

  test('MailInService.log pages the log newest first, by outcome', async ({ assert }) => {
    const mail = await app.container.make(MailInService)
    const all = await mail.log({ offset: 0, limit: 5 })
    assert.isAbove(all.total, 0)
    assert.isAtMost(all.rows.length, 5)
    const ids = all.rows.map((row) => row.id)
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a)
    )
    const refused = await mail.log({ offset: 0, limit: 50, outcome: 'refused' })
    assert.isTrue(refused.rows.every((row) => row.outcome === 'refused' && row.code !== null))
    const [first] = all.rows
    assert.isString(first.receivedAt)
    assert.includeMembers(Object.keys(first), [
      'sender',
      'recipient',
      'messageId',
      'outcome',
      'reason',
      'smid',
    ])
  })
})
