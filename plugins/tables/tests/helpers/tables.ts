import db from '@adonisjs/lucid/services/db'
import emitter from '@adonisjs/core/services/emitter'
import type { Actor } from '#core/rpc/base_operation'
import { NO_RESTRICTIONS } from '#models/api_session'
import type { RowsChanged } from '../../events.js'
import { DateTime } from 'luxon'
import { type Form } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { QuireClient } from '#client/index'
import { login, makeUser, type Session } from '#tests/helpers/users'

let counter = 0

/**
 * A book with an owner (admin) and optional members, as a fixture: rows are
 * written straight into the books plugin's tables, since its public service
 * only reads (BookAccessService).
 */
export async function makeBook(members: { right: number }[] = []) {
  const owner = await makeUser()
  const code = `tb${Date.now().toString(36)}${++counter}`
  const now = DateTime.now().toSQL({ includeOffset: false })
  const [bookId] = await db.table('books').insert({ owner_id: owner.id, code, created_at: now })
  await db
    .table('book_members')
    .insert({ book_id: bookId, user_id: owner.id, invite: 'accepted', right: 4, created_at: now })
  const others = []
  for (const member of members) {
    const user = await makeUser()
    await db.table('book_members').insert({
      book_id: bookId,
      user_id: user.id,
      invite: 'accepted',
      right: member.right,
      created_at: now,
    })
    others.push({ user, session: await login(user) })
  }
  return {
    id: Number(bookId),
    b_o: owner.code,
    b_c: code,
    owner,
    session: await login(owner),
    members: others,
  }
}

export type Call = (
  req: string,
  params?: Record<string, unknown>,
  form?: Form
) => Promise<Record<string, any>>

/** An api.php caller bound to a session (the typed client's call(): the envelope as answered). */
export function caller(session: Session | null): Call {
  let client: QuireClient | null = null
  return (req, params = {}, form = 'urlencoded') => {
    if (!client) {
      client = new QuireClient({ baseUrl: serverUrl(), retries: 0, version: '6.49q/6.49' })
      if (session)
        client.useSession({ o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey })
    }
    return client.call(req, params, { form })
  }
}

/** A new field of table `catId` (`options` sent as JSON, `extra` e.g. a code): its id. */
export async function addField(
  call: Call,
  catId: number,
  name: string,
  type: string,
  options?: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): Promise<number> {
  const params = { catId, name, type, ...extra }
  const answer = await call(
    'createField',
    options ? { ...params, options: JSON.stringify(options) } : params
  )
  return ok(answer).fieldId as number
}

/** New rows (createOrUpdateTableRows, tmp0, tmp1, ... in order): their ids. */
export async function addRows(
  call: Call,
  rows: Record<string, unknown>[],
  extra: Record<string, unknown> = {}
): Promise<number[]> {
  const keyed = Object.fromEntries(rows.map((values, i) => [`tmp${i}`, values]))
  const answer = await call('createOrUpdateTableRows', { ...extra, rows: JSON.stringify(keyed) })
  return ok(answer).newRows.map((row: any) => Number(row.id))
}

export function ok(body: Record<string, any>) {
  if (body.status !== 'ok') throw new Error(`expected ok: ${JSON.stringify(body)}`)
  return body
}

/** The errorCode of an answer (lets assertions read `await errorCode(call(...))`). */
export async function errorCode(answer: Promise<Record<string, any>>) {
  const body = await answer
  return body.errorCode
}

/** The status of an answer. */
export async function statusOf(answer: Promise<Record<string, any>>) {
  const body = await answer
  return body.status
}

/** Polls `probe` until it answers true (jobs run after the write answered), or fails after `ms`. */
export async function eventually(probe: () => Promise<boolean>, ms = 10_000, what?: string) {
  const until = Date.now() + ms
  for (;;) {
    if (await probe()) return
    if (Date.now() > until)
      throw new Error(`${what ? `${what}: ` : ''}condition not met within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A service-level actor for the book's owner (the kernel builds the same from a session). */
export function ownerActor(book: Awaited<ReturnType<typeof makeBook>>) {
  return {
    user: book.owner,
    principal: book.owner,
    session: null,
    restrictions: NO_RESTRICTIONS,
    onBehalf: false,
  } as unknown as Actor
}

/** The rows of a table keyed by id, each {fieldId: value} (the diff_ready_rows format). */
export async function rowsOf(call: Call, catId: number, extra: Record<string, unknown> = {}) {
  const answer = ok(await call('getTableValues', { catId, format: 'diff_ready_rows', ...extra }))
  return answer.tableValues.rows as Record<string, Record<string, any>>
}

/** The values of one field down a columns-format answer, in row order. */
export function columnOf(answer: Record<string, any>, fieldId: number) {
  return answer.tableValues.fields
    .find((field: any) => field.id === fieldId)
    .values.map((cell: any) => cell.value)
}

/** Collects tables:rows_changed events until `stop()`. */
export function rowsChangedEvents() {
  const events: RowsChanged[] = []
  const listener = (event: RowsChanged) => {
    events.push(event)
  }
  emitter.on('tables:rows_changed', listener)
  return { events, stop: () => emitter.off('tables:rows_changed', listener) }
}
