import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { connect } from 'node:net'
import { freePort, startQuire } from '../../../../bench/lib/quire_process.js'
import nodemailer from 'nodemailer'
import { client, book, share, sharedBook } from '#plugins/books/tests/helpers/books'
import { MediaStore } from '#plugins/media/services/media_store'
import { bookAddress, bookPairsOf } from '#plugins/gateways/services/mail_in/mail_address'
import { sanitizeMailHtml } from '#plugins/gateways/services/mail_in/mail_html'
import { MailInService } from '#plugins/gateways/services/mail_in/mail_in_service'
import { SmtpListener } from '#plugins/gateways/services/mail_in/smtp_listener'
import {
  MAIL_DOMAIN,
  addressOf,
  footprint,
  lastLog,
  messageRow,
  pdf,
  png,
  withMailSettings,
} from '../helpers/mail_in.js'

/** A plain SMTP conversation (what a client's lines get as replies), for what nodemailer never sends. */
async function smtpSession(port: number) {
  const socket = connect(port, '127.0.0.1')
  let buffer = ''
  let waiting: ((reply: string) => void) | null = null
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    buffer += chunk
    // A reply ends with a line whose code is followed by a space.
    const match = /(?:^|\r\n)\d{3} [^\r\n]*\r\n$/.exec(buffer)
    if (match && waiting) {
      const reply = buffer.replace(/\r\n/g, '\n')
      buffer = ''
      const done = waiting
      waiting = null
      done(reply)
    }
  })
  const next = () => new Promise<string>((resolve) => (waiting = resolve))
  await next() // the greeting
  return {
    say(line: string) {
      const reply = next()
      socket.write(`${line}\r\n`)
      return reply
    },
    close: () => socket.destroy(),
  }
}

test.group('gateways: book addresses', () => {
  test('bookAddress writes <b_c>.<b_o>@MAIL_DOMAIN; codes an address cannot carry have none', ({
    assert,
  }) => {
    assert.equal(
      bookAddress({ b_o: 'alice', b_c: 'groceries' }, 'q.test'),
      'groceries.alice@q.test'
    )
    assert.equal(bookAddress({ b_o: 'john.doe', b_c: 'a-b_c' }, 'q.test'), 'a-b_c.john.doe@q.test')
    assert.isNull(bookAddress({ b_o: 'alice', b_c: 'groceries' }, undefined))
    for (const code of ['été', 'a+b', 'a@b', '.a', 'a..b', 'x'.repeat(60)]) {
      assert.isNull(bookAddress({ b_o: 'alice', b_c: code }, 'q.test'), code)
    }
  })

  test('bookPairsOf reads every split at a dot, on the domain only, whatever its case', ({
    assert,
  }) => {
    assert.deepEqual(bookPairsOf('a.b.c@Q.Test', 'q.test'), [
      { b_c: 'a', b_o: 'b.c' },
      { b_c: 'a.b', b_o: 'c' },
    ])
    assert.deepEqual(bookPairsOf('a.b@other.test', 'q.test'), [])
    assert.deepEqual(bookPairsOf('nodot@q.test', 'q.test'), [])
    assert.deepEqual(bookPairsOf('a+b.c@q.test', 'q.test'), [])
  })
})

test.group('gateways: inbound HTML', () => {
  test('keeps formatting, drops scripts, handlers, forms, frames and remote resources', ({
    assert,
  }) => {
    const clean = sanitizeMailHtml(`
      <style>body{background:url(https://tracker.test/s.gif)}</style>
      <p style="color: red; background-image: url(https://tracker.test/b.gif)" onclick="steal()">
        <b>bold</b> <i>it</i> <a href="https://example.test/x" onmouseover="x()">link</a>
        <a href="javascript:alert(1)">js</a>
      </p>
      <script>alert(1)</script><iframe src="https://evil.test"></iframe>
      <form action="https://evil.test"><input name="a"></form>
      <img src="https://tracker.test/pixel.gif" alt="pixel"><img src="cid:logo@x" alt="logo">
      <img src="data:image/png;base64,AAAA"><table><tr><td colspan="2">cell</td></tr></table>`)
    assert.include(clean, '<b>bold</b>')
    assert.include(clean, '<i>it</i>')
    assert.include(clean, '<td colspan="2">cell</td>')
    assert.include(clean, 'href="https://example.test/x"')
    assert.include(clean, 'rel="noopener noreferrer nofollow"')
    assert.include(clean, 'src="cid:logo@x"')
    assert.include(clean, 'style="color:red"')
    for (const gone of [
      'script',
      'alert',
      'onclick',
      'onmouseover',
      'iframe',
      'form',
      'input',
      'tracker.test',
      'javascript:',
      'data:image',
      'url(',
      '<style',
    ]) {
      assert.notInclude(clean, gone)
    }
  })
})

test.group('gateways: e-mail in over SMTP (nodemailer to the listener on 127.0.0.1)', (group) => {
  let listener: SmtpListener
  let port: number
  let restore: () => void

  group.setup(async () => {
    restore = withMailSettings({ maxBytes: 200_000 })
    listener = new SmtpListener(await app.container.make(MailInService))
    port = await listener.start({ port: 0, host: '127.0.0.1' })
    return async () => {
      await listener.stop()
      restore()
    }
  })

  const transport = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })

  test('a member’s mail is stored with _mail, text, sanitized HTML, an inline image and a document', async ({
    assert,
  }) => {
    const { owner, members, target } = await sharedBook(2)
    const [member] = members
    const image = await png()
    const info = await transport().sendMail({
      from: `Member <${member.user.email!.toUpperCase()}>`,
      to: addressOf(target),
      subject: 'Quarterly figures',
      text: 'See the figures attached.',
      html: '<p onclick="x()">See <b>the figures</b>:<img src="cid:chart@quire"></p><script>1</script>',
      attachments: [
        { filename: 'chart.png', content: image, cid: 'chart@quire' },
        { filename: 'report.pdf', content: pdf() },
      ],
    })
    assert.lengthOf(info.accepted, 1)
    assert.match(info.response, /^250 /)

    const log = await lastLog()
    assert.equal(log.outcome, 'stored')
    assert.equal(log.source, 'smtp')
    assert.equal(log.sender, member.user.email)
    assert.equal(log.recipient, addressOf(target))
    assert.equal(log.message_id, info.messageId)
    const row = await messageRow(Number(log.smid))
    assert.equal(row.msg_method, '_mail')
    assert.equal(row.msg, 'Quarterly figures')
    assert.equal(row.msg_body, 'See the figures attached.')
    assert.equal(row.msg_body_html, '<p>See <b>the figures</b>:<img src="cid:chart@quire" /></p>')
    assert.equal(Number(row.creator_id), member.user.id)
    assert.equal(Number(row.nb_medias), 1)
    assert.equal(Number(row.nb_docs), 1)
    assert.equal(Number(row.nb_email_cids), 1)

    // What clients read (getBookMessages), and the files behind it.
    const page = await owner.call({ req: 'getBookMessages', ...target })
    const message = page.bookMessages.find((m: any) => m.smid === Number(log.smid))
    assert.equal(message.msgMethod, '_mail')
    assert.equal(message.nbEmailCids, 1)
    const [inline, doc] = message.medias
    assert.include(inline, {
      type: 'media',
      emailCid: 'chart@quire',
      ext: 'png',
      originName: 'chart.png',
    })
    assert.include(doc, { type: 'doc', emailCid: '', ext: 'pdf', originName: 'report.pdf' })
    const files = await db.from('media_files').where('smid', log.smid).orderBy('id')
    assert.deepEqual(
      files.map((file) => [file.kind, Number(file.width), Number(file.book_id)]),
      [
        ['image', 8, row.book_id],
        ['doc', 0, row.book_id],
      ]
    )
    const store = await app.container.make(MediaStore)
    const stored = await store.stat(files[0].storage_key)
    assert.equal(stored?.size, image.length)
    // The image is the book's last media (its cover), as after a fileUpload.
    const bookRow = await db.from('books').where('id', row.book_id).first()
    assert.equal(Number(bookRow.last_media), Number(files[0].id))
  })

  test('refusals: 550 unknown book, stranger, non-member and reader; 552 too large; nothing stored', async ({
    assert,
  }) => {
    const { owner, members, target } = await sharedBook(1)
    const [reader] = members
    const outsider = await client()
    const before = await footprint()
    const refused = async (from: string, to: string, extra: Record<string, unknown> = {}) => {
      const error = await transport()
        .sendMail({ from, to, subject: 'hello', text: 'hello', ...extra })
        .then(() => null)
        .catch((caught) => caught)
      assert.isNotNull(error, `${from} -> ${to} was accepted`)
      return error as { responseCode: number; response: string }
    }

    const unknownBook = await refused(owner.user.email!, `nope.${owner.code}@${MAIL_DOMAIN}`)
    assert.equal(unknownBook.responseCode, 550)
    assert.include(unknownBook.response, 'No such book, or the sender may not post to it')
    const stranger = await refused('nobody@elsewhere.test', addressOf(target))
    assert.equal(stranger.responseCode, 550)
    assert.equal(stranger.response, unknownBook.response)
    const notMember = await refused(outsider.user.email!, addressOf(target))
    assert.equal(notMember.responseCode, 550)
    assert.equal(notMember.response, unknownBook.response)
    const notMemberLog = await lastLog()
    assert.match(notMemberLog.reason, /is not a member/)
    const readOnly = await refused(reader.user.email!, addressOf(target))
    assert.equal(readOnly.responseCode, 550)
    assert.include(readOnly.response, '5.7.1')
    const otherDomain = await refused(
      owner.user.email!,
      `${target.b_c}.${target.b_o}@elsewhere.test`
    )
    assert.equal(otherDomain.responseCode, 550)
    const tooLarge = await refused(owner.user.email!, addressOf(target), {
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(300_000, 7) }],
    })
    assert.equal(tooLarge.responseCode, 552)
    const tooLargeLog = await lastLog()
    assert.equal(tooLargeLog.code, 'MAIL_TOO_LARGE')

    const after = await footprint()
    assert.equal(after.messages, before.messages)
    assert.equal(after.media, before.media)
    assert.equal(after.files, before.files)
    // Each refusal is logged (the other domain is refused at RCPT TO, before any message).
    assert.equal(after.log, before.log + 5)
  })

  test('SIZE is advertised, and a MAIL FROM announcing more is refused before the data', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const session = await smtpSession(port)
    try {
      assert.match(await session.say('EHLO sender.test'), /^250[- ]SIZE 200000$/m)
      const answer = await session.say(`MAIL FROM:<${owner.user.email}> SIZE=500000`)
      assert.match(answer, /^552 /)
      assert.match(await session.say(`MAIL FROM:<${owner.user.email}> SIZE=1000`), /^250 /)
      assert.match(await session.say(`RCPT TO:<${addressOf(target)}>`), /^250 /)
    } finally {
      session.close()
    }
  })

  test('one book per transaction: a second book recipient answers 452, and is sent on its own', async ({
    assert,
  }) => {
    const owner = await client()
    const first = await book(owner)
    const second = await book(owner)
    const member = await client()
    await share(owner, second, member)
    const info = await transport().sendMail({
      from: owner.user.email!,
      to: [addressOf(first), addressOf(second)],
      subject: 'twice',
      text: 'to two books',
    })
    assert.deepEqual(info.accepted, [addressOf(first)])
    assert.deepEqual(info.rejected, [addressOf(second)])
    const again = await transport().sendMail({
      from: owner.user.email!,
      to: addressOf(second),
      subject: 'twice',
      text: 'to two books',
    })
    assert.deepEqual(again.accepted, [addressOf(second)])
  })
})

test.group('gateways: the SMTP listener in the web server', () => {
  test('GATEWAYS_SMTP_LISTEN_PORT starts it with the server, which stores mail; a stop closes it', async ({
    assert,
  }) => {
    const owner = await client()
    const target = await book(owner)
    const port = await freePort()
    const server = await startQuire({
      ...process.env,
      MAIL_DOMAIN,
      GATEWAYS_SMTP_LISTEN_PORT: String(port),
      GATEWAYS_SMTP_LISTEN_HOST: '127.0.0.1',
    })
    try {
      const info = await nodemailer
        .createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
        .sendMail({
          from: owner.user.email!,
          to: bookAddress(target, MAIL_DOMAIN)!,
          subject: 'through the server',
          text: 'x',
        })
      assert.match(info.response, /^250 /)
      const row = await db.from('gateways_mail_in_log').where('message_id', info.messageId).first()
      assert.equal(row.outcome, 'stored')
      const message = await messageRow(Number(row.smid))
      assert.equal(message.msg, 'through the server')
    } finally {
      await server.stop()
    }
    assert.equal(server.child.exitCode, 0)
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', () => resolve(true))
    })
    assert.isTrue(closed)
  }).timeout(150_000)
})
