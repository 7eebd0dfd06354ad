import { test } from '@japa/runner'
import { serverUrl } from '#tests/helpers/server'
import type { Session } from '#tests/helpers/users'
import { call, world, type World } from './world.js'

/**
 * The media entry points outside api.php's dispatcher (the /dbi URLs, the tus
 * creation) and the per-file checks of fileUpload and setBookCover go through
 * the kernel's restriction step: a session hiding messages or tables reaches
 * neither the files of that area nor uploads into it. Each refusal has its
 * control: the same request answered to a session that does not hide the area.
 */

let w: World
/** A message attachment and a file-cell file of the victim's book. */
let inMessage: Record<string, any>
let inCell: Record<string, any>

const dbi = async (path: string, session: Pick<Session, 'o_u' | 'sesskey'>) => {
  const query = new URLSearchParams({
    o_u: session.o_u,
    u_c: session.o_u,
    sesskey: session.sesskey,
  })
  const response = await fetch(`${serverUrl()}/live/dbi/${path}?${query}`)
  await response.arrayBuffer()
  return response.status
}

const metadataHeader = (metadata: Record<string, string | number>) =>
  Object.entries(metadata)
    .map(([key, value]) => `${key} ${Buffer.from(String(value)).toString('base64')}`)
    .join(',')

/** A tus creation (nothing is sent after it). */
async function tusCreate(session: Session, target: Record<string, string | number>) {
  const response = await fetch(`${serverUrl()}/live/upload`, {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': '10',
      'Upload-Metadata': metadataHeader({
        o_u: session.o_u,
        sesskey: session.sesskey,
        filename: 'x.png',
        ...target,
      }),
    },
  })
  await response.arrayBuffer()
  return response.status
}

/** fileUpload of a small PDF (world's call() sends an image). */
async function uploadPdf(session: Session, target: Record<string, string>) {
  const form = new FormData()
  const fields = { req: 'fileUpload', o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
  for (const [key, value] of Object.entries({ ...fields, ...target })) form.append(key, value)
  form.append('qqfile', new Blob(['%PDF-1.4\n%%EOF\n']), 'a.pdf')
  const response = await fetch(`${serverUrl()}/live/api.php`, { method: 'POST', body: form })
  return (await response.json()) as Record<string, any>
}

test.group('authz: media and session restrictions', (group) => {
  group.setup(async () => {
    w = await world()
    const { book } = w
    inMessage = await call(w.victim.session, 'fileUpload', {
      b_o: book.b_o,
      b_c: book.b_c,
      smid: book.smid,
    })
    inCell = await call(w.victim.session, 'fileUpload', {
      b_o: book.b_o,
      rowId: String(book.rowId),
      fieldId: book.filesField,
    })
    if (inMessage.status !== 'ok' || inCell.status !== 'ok')
      throw new Error(`uploads: ${JSON.stringify([inMessage, inCell])}`)
  })

  /** The session-bound forms naming each file, by area. */
  const pathsOf = () => {
    const { book } = w
    const at = `${book.b_o}/${book.b_c}`
    return {
      messages: [
        `ic/tb/${at}/${book.smid}/1`,
        `oic/full/${at}/${book.smid}/1`,
        `ii/tb/${at}/${inMessage.id}`,
        `oii/full/${at}/${inMessage.id}`,
        `oin/full/${inMessage.uuid}`,
      ],
      tables: [
        `ii/tb/${at}/${inCell.id}`,
        `oii/full/${at}/${inCell.id}`,
        `oin/full/${inCell.internName}`,
      ],
    }
  }

  test('a session hiding an area gets 403 on the /dbi forms of its files, the other area 200', async ({
    assert,
  }) => {
    const paths = pathsOf()
    const failures: string[] = []
    for (const [hidden, session, shown] of [
      ['messages', w.sessions.hideMessages, 'tables'],
      ['tables', w.sessions.hideTables, 'messages'],
    ] as const) {
      for (const path of paths[hidden]) {
        const status = await dbi(path, session)
        if (status !== 403) failures.push(`hide ${hidden} ${path}: ${status}`)
        const control = await dbi(path, w.victim.session)
        if (control !== 200) failures.push(`control ${path}: ${control}`)
      }
      for (const path of paths[shown]) {
        const status = await dbi(path, session)
        if (status !== 200) failures.push(`hide ${hidden}, ${shown} ${path}: ${status}`)
      }
    }
    assert.deepEqual(failures, [])
  })

  test('the document forms of a message refuse a session hiding messages', async ({ assert }) => {
    const pdf = await uploadPdf(w.victim.session, {
      b_o: w.book.b_o,
      b_c: w.book.b_c,
      smid: String(w.book.smid),
    })
    assert.equal(pdf.status, 'ok', JSON.stringify(pdf))
    const at = `${w.book.b_o}/${w.book.b_c}`
    for (const path of [`dc/tb/${at}/${w.book.smid}/1`, `odc/full/${at}/${w.book.smid}/1`]) {
      assert.equal(await dbi(path, w.sessions.hideMessages), 403, path)
      assert.equal(await dbi(path, w.sessions.hideTables), 200, path)
    }
  })

  test('the tus creation refuses a target in a hidden area with 403', async ({ assert }) => {
    const { book } = w
    const message = { b_o: book.b_o, b_c: book.b_c, smid: book.smid }
    const cell = {
      b_o: book.b_o,
      b_c: book.b_c,
      rowId: String(book.rowId),
      fieldId: book.filesField,
    }
    assert.equal(await tusCreate(w.sessions.hideMessages, message), 403)
    assert.equal(await tusCreate(w.sessions.hideTables, cell), 403)
    assert.equal(await tusCreate(w.sessions.readonly, message), 403)
    // Controls: the other area, and the same targets unrestricted.
    assert.equal(await tusCreate(w.sessions.hideMessages, cell), 201)
    assert.equal(await tusCreate(w.sessions.hideTables, message), 201)
  })

  test('fileUpload refuses a target in a hidden area, and accepts the other', async ({
    assert,
  }) => {
    const { book } = w
    const message = { b_o: book.b_o, b_c: book.b_c, smid: book.smid }
    const cell = { b_o: book.b_o, rowId: String(book.rowId), fieldId: book.filesField }
    const code = async (session: Session, params: Record<string, unknown>) => {
      const answer = await call(session, 'fileUpload', params)
      return answer.errorCode ?? 'ok'
    }
    assert.equal(await code(w.sessions.hideMessages, message), 'RESTRICTED_SESSION')
    assert.equal(await code(w.sessions.hideTables, cell), 'RESTRICTED_SESSION')
    assert.equal(await code(w.sessions.hideMessages, cell), 'ok')
    assert.equal(await code(w.sessions.hideTables, message), 'ok')
  })

  test('setBookCover from a file refuses a session hiding that file’s area', async ({ assert }) => {
    const cover = async (session: Session, uuid: string) => {
      const book = { b_o: w.book.b_o, b_c: w.book.b_c }
      const answer = await call(session, 'setBookCover', { ...book, as: 'member', uuid })
      return answer.errorCode ?? 'ok'
    }
    assert.equal(await cover(w.sessions.hideMessages, inMessage.uuid), 'RESTRICTED_SESSION')
    assert.equal(await cover(w.sessions.hideTables, inCell.uuid), 'RESTRICTED_SESSION')
    assert.equal(await cover(w.sessions.hideTables, inMessage.uuid), 'ok')
  })
})
