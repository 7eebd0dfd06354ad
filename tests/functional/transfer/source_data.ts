/**
 * Data of every kind the transfer copies, written into a Quire instance through its api.php
 * (as a client would): a book with a member, messages (one with an event, one with a file, one
 * edited, one deleted), and two tables (text, number, enum, date, checkbox, link, files,
 * comments fields; a second view with a filter) with rows, a cell file and a comment thread.
 */

export interface ApiSession {
  o_u: string
  u_c: string
  sesskey: string
}

// A 1x1 PNG: a real image, so the server stores it as an image.
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64'
)
export const DOC = Buffer.from('%PDF-1.4\n% a small document for the transfer tests\n')

export async function call(
  url: string,
  session: ApiSession | null,
  params: Record<string, unknown>
) {
  const form = new URLSearchParams()
  for (const [key, value] of Object.entries({ ...session, ...params })) {
    if (value === undefined) continue
    form.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value))
  }
  const response = await fetch(`${url}/live/api.php`, { method: 'POST', body: form })
  const body = (await response.json()) as Record<string, any>
  if (body.status !== 'ok') throw new Error(`${params.req}: ${JSON.stringify(body)}`)
  return body
}

export async function upload(
  url: string,
  session: ApiSession,
  params: Record<string, unknown>,
  bytes: Buffer,
  name: string,
  type: string
) {
  const form = new FormData()
  for (const [key, value] of Object.entries({ ...session, req: 'fileUpload', ...params })) {
    if (value !== undefined) form.set(key, String(value))
  }
  form.set('qqfile', new Blob([bytes], { type }), name)
  const response = await fetch(`${url}/live/api.php`, { method: 'POST', body: form })
  const body = (await response.json()) as Record<string, any>
  if (body.status !== 'ok') throw new Error(`fileUpload: ${JSON.stringify(body)}`)
  return body
}

export async function signIn(url: string, login: string, pwd: string): Promise<ApiSession> {
  const { appkey } = await call(url, null, { req: 'createAppkey', appname: 'transfer tests' })
  const oauth = await call(url, null, { req: 'createOauthkey', login, pwd, appkey })
  const { sesskey } = await call(url, null, {
    req: 'createSesskey',
    o_u: oauth.o_u,
    u_c: oauth.o_u,
    oauthkey: oauth.oauthkey,
  })
  return { o_u: oauth.o_u, u_c: oauth.o_u, sesskey }
}

export interface SourceIds {
  b_o: string
  b_c: string
  tasks: number
  people: number
  fields: Record<string, number>
  peopleName: number
  rows: number[]
  people1: number
}

export async function seedSource(url: string, session: ApiSession, b_c: string, member?: string) {
  const api = (params: Record<string, unknown>) => call(url, session, params)
  const created = await api({ req: 'createBook', b_c, title: `Book ${b_c}`, description: 'copied' })
  const book = { b_o: created.book.b_o as string, b_c }
  if (member) await api({ req: 'inviteMember', ...book, member, right: 3 })

  await api({ req: 'sendMsg', ...book, msg: 'first message', uuid: `${b_c}-m1` })
  await api({
    req: 'sendMsg',
    ...book,
    msg: 'a meeting',
    event: {
      eventStart: 1893456000,
      eventEnd: 1893459600,
      eventTimezone: 'Europe/Paris',
      eventAllDay: false,
      isBusy: true,
    },
  })
  const withFile = await api({ req: 'sendMsg', ...book, msg: 'with files', nbMedias: 1, nbDocs: 1 })
  await upload(
    url,
    session,
    { ...book, smid: withFile.createMessageId },
    PNG,
    'dot.png',
    'image/png'
  )
  await upload(
    url,
    session,
    { ...book, smid: withFile.createMessageId },
    DOC,
    'notes.pdf',
    'application/pdf'
  )
  const edited = await api({ req: 'sendMsg', ...book, msg: 'before the edit' })
  await api({ req: 'sendMsg', ...book, msg_id: edited.createMessageId, msg: 'after the edit' })
  const gone = await api({ req: 'sendMsg', ...book, msg: 'deleted later' })
  await api({ req: 'deleteMsg', ...book, msg_id: gone.createMessageId, msg: '' })

  const people = await api({
    req: 'createTable',
    ...book,
    name: 'People',
    fields: [{ name: 'Name', type: 'shorttext' }],
  })
  const peopleFields = await api({ req: 'getBookTables', ...book, includeFields: true })
  const peopleName = peopleFields.bookTables.categories[0].fields[0].id as number
  const people1 = await api({
    req: 'createOrUpdateTableRows',
    ...book,
    catId: people.catId,
    rows: { tmpA: { [peopleName]: 'Ada' }, tmpB: { [peopleName]: 'Grace' } },
  })

  const tasks = await api({ req: 'createTable', ...book, name: 'Tasks', description: 'to do' })
  const fields: Record<string, number> = {}
  const field = async (name: string, type: string, options?: Record<string, unknown>) => {
    const answer = await api({
      req: 'createField',
      ...book,
      catId: tasks.catId,
      name,
      type,
      options,
    })
    fields[name] = answer.fieldId
  }
  await field('Title', 'shorttext')
  await field('Notes', 'mediumtext')
  await field('Cost', 'double')
  await field('State', 'enum', { values: ['todo', 'done'] })
  await field('Due', 'date')
  await field('Urgent', 'checkbox')
  await field('Owner', 'link', { linkCatId: people.catId })
  await field('Files', 'files')
  await field('Talk', 'comments')
  await api({
    req: 'createView',
    ...book,
    catId: tasks.catId,
    name: 'Open',
    presentation: 'grid',
    filterGroup: {
      operator: 'and',
      filters: [
        {
          id: 'tmp0',
          field_id: fields.State,
          filter_type: 'text',
          json: { predicate: 'is', operand: 'todo' },
        },
      ],
    },
  })
  const peopleIds = (people1.newRows as { id: number }[]).map((row) => Number(row.id))
  const rows: Record<string, Record<string, unknown>> = {}
  for (let index = 0; index < 7; index++) {
    rows[`tmp${index}`] = {
      [fields.Title]: `Task ${index}`,
      [fields.Notes]: `line one\nline ${index}`,
      [fields.Cost]: index * 1.5,
      [fields.State]: index % 2 ? 'done' : 'todo',
      [fields.Due]: `2030-01-0${index + 1}`,
      [fields.Urgent]: index % 3 === 0,
      [fields.Owner]: [peopleIds[index % 2]],
    }
  }
  const written = await api({ req: 'createOrUpdateTableRows', ...book, catId: tasks.catId, rows })
  const rowIds = (written.newRows as { id: number; tmpId: string }[])
    .sort((a, b) => Number(a.tmpId.slice(3)) - Number(b.tmpId.slice(3)))
    .map((row) => Number(row.id))
  await upload(
    url,
    session,
    { ...book, rowId: rowIds[0], fieldId: fields.Files },
    DOC,
    'spec.pdf',
    'application/pdf'
  )
  await api({
    req: 'editTableValueComments',
    ...book,
    fieldId: fields.Talk,
    rowId: rowIds[1],
    m: 'first comment',
  })
  await api({
    req: 'editTableValueComments',
    ...book,
    fieldId: fields.Talk,
    rowId: rowIds[1],
    m: 'second comment',
  })
  return {
    ...book,
    tasks: tasks.catId as number,
    people: people.catId as number,
    fields,
    peopleName,
    rows: rowIds,
    people1: peopleIds[0],
  } satisfies SourceIds
}
