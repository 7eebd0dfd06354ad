import { randomUUID } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import app from '@adonisjs/core/services/app'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { serverUrl } from '#tests/helpers/server'
import { login, type Session } from '#tests/helpers/users'
import { invite, member, memberOf, type Member } from '../functional/socket/fixtures.js'

/**
 * The world of the authorization suite, built once through the real API: a
 * victim with a book full of things (a table with rows, a comment thread,
 * a view and a tab, messages and an event), members with lesser rights,
 * restricted and dropped sessions of people of that book, and an attacker
 * with a world of their own (to mix their ids with the victim's). Every name,
 * body and value of the victim carries SECRET: an answer to anyone else that
 * contains it leaked.
 */

export const SECRET = `ZQSECRET${randomUUID().slice(0, 8)}`

export interface Objects {
  b_o: string
  b_c: string
  catId: number
  catCode: string
  nameField: number
  talkField: number
  /** A link field of the table to itself: getReferenceFieldValues. */
  linkField: number
  /** A files field: fileUpload aimed at a cell. */
  filesField: number
  rowId: number
  otherRowId: number
  viewId: number
  tabId: number
  smid: number
  eventSmid: number
  eventId: number
  commentId: number
  /** A row token of the table (revokeTableToken). */
  tokenId: number
  /** A row webhook of the table, created inactive (it never delivers). */
  webhookId: number
}

export type Call = (
  session: Pick<Session, 'o_u' | 'sesskey'>,
  req: string,
  params?: Record<string, unknown>
) => Promise<Record<string, any>>

const wire = (value: unknown) =>
  value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)

/** A 1x1 PNG: uploads reach the access check with a valid image. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64'
)

/** Operations that take a file part (qqfile). */
const UPLOADS = new Set(['fileUpload', 'setBookCover', 'setProfileImage'])

/** api.php over real HTTP as a session (multipart with a small file for uploads). */
export const call: Call = async (session, req, params = {}) => {
  const fields: Record<string, string> = {
    req,
    version: '6.49q/6.49',
    o_u: session.o_u,
    u_c: session.o_u,
    sesskey: session.sesskey,
  }
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) fields[key] = wire(value)
  }
  let init: RequestInit
  if (UPLOADS.has(req)) {
    const form = new FormData()
    for (const [key, value] of Object.entries(fields)) form.append(key, value)
    form.append('qqfile', new Blob([PNG], { type: 'image/png' }), 'probe.png')
    init = { method: 'POST', body: form }
  } else {
    init = {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    }
  }
  const response = await fetch(`${serverUrl()}/live/api.php`, init)
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return { unparsable: text, httpStatus: response.status }
  }
}

function ok(answer: Record<string, any>, what: string) {
  if (answer.status !== 'ok') throw new Error(`${what}: ${JSON.stringify(answer)}`)
  return answer
}

/** A book with everything in it, every text marked with `mark`. */
async function furnish(owner: Member, mark: string): Promise<Objects> {
  const as = (req: string, params: Record<string, unknown>) =>
    call(owner.session, req, params).then((answer) => ok(answer, `${req} (${mark})`))
  const tag = `${Date.now().toString(36)}${randomUUID().slice(0, 4)}`
  const book = { b_o: owner.code, b_c: `az${tag}` }
  await as('createBook', { b_c: book.b_c, title: `${mark} book`, description: `${mark} about` })
  const catCode = `t${tag}`
  const table = await as('createTable', {
    ...book,
    name: `${mark} table`,
    code: catCode,
    fields: [
      { name: `${mark} name`, type: 'shorttext' },
      { name: `${mark} talk`, type: 'comments' },
      { name: `${mark} files`, type: 'files' },
    ],
  })
  const catId = Number(table.catId)
  const tables = await as('getBookTables', { ...book, includeFields: 'true' })
  const category = tables.bookTables.categories.find((entry: any) => entry.id === catId)
  const [nameField, talkField, filesField] = category.fields.map((field: any) => Number(field.id))
  const link = await as('createField', {
    b_o: book.b_o,
    catId,
    name: `${mark} link`,
    type: 'link',
    options: { linkCatId: catId },
  })
  const linkField = Number(link.fieldId)
  const rows = await as('createOrUpdateTableRows', {
    b_o: book.b_o,
    catId,
    rows: {
      tmp1: { [nameField]: `${mark} cell one` },
      tmp2: { [nameField]: `${mark} cell two` },
    },
  })
  const [rowId, otherRowId] = rows.newRows.map((row: any) => Number(row.id))
  const comment = await as('editTableValueComments', {
    b_o: book.b_o,
    fieldId: talkField,
    rowId: String(rowId),
    m: `${mark} comment`,
  })
  const view = await as('createView', { b_o: book.b_o, catId, name: `${mark} view` })
  const viewId = Number(view.viewId ?? view.id)
  const tab = await as('createTab', { b_o: book.b_o, catId, viewId })
  const tabId = Number(tab.tabId ?? tab.id)
  const token = await as('createTableToken', { b_o: book.b_o, catId, rowId: String(rowId) })
  const message = await as('sendMsg', { ...book, msg: `${mark} message`, uuid: randomUUID() })
  const eventMessage = await as('sendMsg', {
    ...book,
    msg: `${mark} meeting`,
    uuid: randomUUID(),
    event: { eventStart: '2031-01-01T10:00:00Z', eventEnd: '2031-01-01T11:00:00Z' },
  })
  const events = await as('getBookEvents', book)
  const event = events.bookEvents?.[0] ?? events.events?.[0]
  // Made last and switched off at once: no write of the suite may send anything anywhere.
  const webhook = await as('createWebhook', {
    b_o: book.b_o,
    catId,
    url: 'http://localhost:9/authz-probe',
    events: 'row.updated',
  })
  const webhookId = Number(webhook.webhook.id)
  await as('updateWebhook', { webhookId, active: 'false' })
  return {
    ...book,
    catId,
    catCode,
    nameField,
    talkField,
    linkField,
    filesField,
    rowId,
    otherRowId,
    viewId,
    tabId,
    smid: Number(message.createMessageId),
    eventSmid: Number(eventMessage.createMessageId),
    eventId: Number(event?.id ?? event?.eventId ?? event?.event_id),
    commentId: Number(comment.id ?? comment.commentId),
    tokenId: Number(token.tokenId),
    webhookId,
  }
}

export interface World {
  victim: Member
  /** The victim's book and everything in it. */
  book: Objects
  /** Another book of the victim: the one the restricted session is restricted to. */
  otherBook: { b_o: string; b_c: string }
  /** A stranger to the victim's book, with a world of their own. */
  attacker: Member
  own: Objects
  /** A member of the victim's book with the lowest right (read). */
  reader: Member
  sessions: {
    readonly: Session
    restricted: Session
    hideTables: Session
    hideMessages: Session
    hideEvents: Session
    /** An administrator of the victim's book whose session was dropped. */
    dropped: Session
  }
}

let building: Promise<World> | null = null

/** The world, built on first use (once per run). */
export function world() {
  building ??= build()
  return building
}

async function build(): Promise<World> {
  const [victim, attacker, reader, admin] = await Promise.all([
    member(),
    member(),
    member(),
    member(),
  ])
  const book = await furnish(victim, SECRET)
  const own = await furnish(attacker, 'AOWN')
  await invite(victim, book, reader, 1, true)
  await invite(victim, book, admin, 4, true)
  const otherBook = { b_o: victim.code, b_c: `az2${Date.now().toString(36)}` }
  ok(await call(victim.session, 'createBook', { b_c: otherBook.b_c, title: 'Elsewhere' }), 'book')

  const restricted = (restrictions: unknown) => login(victim.user, { restrictions })
  // dropAllSessions keeps the calling session and drops the others.
  const dropped = await login(admin.user)
  ok(await call(await login(admin.user), 'dropAllSessions'), 'dropAllSessions')
  return {
    victim,
    book,
    otherBook,
    attacker,
    own,
    reader,
    sessions: {
      readonly: await restricted('readonly'),
      restricted: await restricted(
        JSON.stringify({ carnet_code: otherBook.b_c, carnet_owner: victim.code })
      ),
      hideTables: await restricted('hideTables'),
      hideMessages: await restricted('hideMessages'),
      hideEvents: await restricted('hideEvents'),
      dropped,
    },
  }
}

export { memberOf }

/** Every registered operation with its wire metadata and the names of its parameters. */
export async function registeredOperations() {
  const registry = await app.container.make(PluginRegistry)
  const operations = []
  for (const [name, claim] of registry.operations) {
    const { default: Operation } = await claim.load()
    const schema = Operation.validator?.toJSON() as any
    const properties: { fieldName: string; isOptional: boolean }[] =
      schema?.schema?.schema?.properties ?? schema?.schema?.properties ?? []
    operations.push({
      name,
      auth: Operation.auth,
      writes: Operation.writes,
      // What the code declares; the area expected is tests/authz/areas.ts's, not this.
      declaredArea: Operation.area as string | undefined,
      params: properties.map((property) => property.fieldName),
      required: properties.filter((p) => !p.isOptional).map((p) => p.fieldName),
    })
  }
  return operations
}

export type OperationInfo = Awaited<ReturnType<typeof registeredOperations>>[number]

/** Every registered socket type and system message with its metadata and parameters. */
export async function registeredSocketMessages() {
  const registry = await app.container.make(PluginRegistry)
  const messages = []
  const entries: [string, { load: () => Promise<{ default: unknown }> }, number | null][] = [
    ...[...registry.socketTypes].map(
      ([type, claim]) => [`type ${type}`, claim, type] as [string, typeof claim, number]
    ),
    ...[...registry.systemMessages].map(
      ([msg, claim]) => [msg, claim, null] as [string, typeof claim, null]
    ),
  ]
  for (const [name, claim, type] of entries) {
    const { default: Handler } = (await claim.load()) as { default: any }
    const schema = Handler.validator?.toJSON() as any
    const properties: { fieldName: string }[] =
      schema?.schema?.schema?.properties ?? schema?.schema?.properties ?? []
    messages.push({
      name,
      type,
      writes: Boolean(Handler.writes),
      declaredArea: Handler.area as string | undefined,
      params: properties.map((property) => property.fieldName),
    })
  }
  return messages
}

/**
 * What the victim's book holds, straight from the database: compared before
 * and after each group of attempts, it proves no refused request wrote.
 */
export async function snapshot(book: Objects) {
  const bookRow = await db
    .from('books')
    .where('books.code', book.b_c)
    .join('users', 'users.id', 'books.owner_id')
    .where('users.code', book.b_o)
    .select('books.*')
    .first()
  const bookId = bookRow.id
  const forms = await db.from('table_forms').where('book_id', bookId).orderBy('id')
  const formIds = forms.map((form) => form.id)
  const categories = await db.from('table_categories').whereIn('form_id', formIds).orderBy('id')
  const categoryIds = categories.map((category) => category.id)
  const rows = []
  for (const id of categoryIds) rows.push(await db.from(`tt_${id}`).orderBy('id'))
  return JSON.stringify({
    book: bookRow,
    members: await db.from('book_members').where('book_id', bookId).orderBy('user_id'),
    messages: await db.from('book_messages').where('book_id', bookId).orderBy('smid'),
    events: await db.from('book_events').where('book_id', bookId).orderBy('id'),
    forms,
    categories,
    fields: await db.from('table_fields').whereIn('category_id', categoryIds).orderBy('id'),
    views: await db.from('table_views').whereIn('category_id', categoryIds).orderBy('id'),
    tabs: await db.from('table_tabs').whereIn('form_id', formIds).orderBy('id'),
    comments: await db.from('table_comments').whereIn('category_id', categoryIds).orderBy('id'),
    rows,
  })
}
