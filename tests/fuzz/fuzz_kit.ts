import app from '@adonisjs/core/services/app'
import type { VineValidator } from '@vinejs/vine'
import { ERROR_CATALOGUE } from '#core/rpc/errors'
import { PluginRegistry } from '#core/plugins/plugin_registry'
import { answerOf, rpc, type Form } from '#tests/helpers/rpc'
import { serverUrl } from '#tests/helpers/server'
import { login, makeUser, type Session } from '#tests/helpers/users'

/**
 * The hostile-input suite's kit: the parameters each registered operation and
 * socket handler declares (read from its validator, so a new one is covered
 * the day it lands), the hostile values, and the checks every answer must
 * pass. The suite is bounded: its size follows the registry, not a clock.
 */

/** A hostile value: `undefined` removes the parameter; `raw` is sent as it is (urlencoded only). */
export interface Hostile {
  name: string
  value: unknown
  /** A urlencoded body fragment for values fetch cannot express (invalid UTF-8). */
  raw?: string
}

const deep = (levels: number) => {
  let value: Record<string, unknown> = { leaf: '1' }
  for (let level = 0; level < levels; level++) value = { a: value }
  return value
}

/** One of each kind the hardening issue names, kept small enough to run thousands of times. */
export const HOSTILE_VALUES: Hostile[] = [
  { name: 'missing', value: undefined },
  { name: 'empty', value: '' },
  { name: 'wrong type', value: 'not-a-number' },
  { name: 'array', value: ['1', '2'] },
  { name: 'object', value: { a: '1', b: { c: '2' } } },
  { name: 'huge', value: 'x'.repeat(100_000) },
  { name: 'deep', value: deep(40) },
  { name: 'deep JSON text', value: '['.repeat(20_000) + ']'.repeat(20_000) },
  { name: 'NUL', value: 'a\u0000b' },
  { name: 'invalid UTF-8', value: 'x', raw: '%FF%FE%FD' },
  { name: '2^63', value: '9223372036854775808' },
  { name: '-2^63', value: '-9223372036854775809' },
  { name: '2^64 as JSON number', value: 18446744073709551616 },
  { name: 'NaN', value: 'NaN' },
  { name: 'Infinity', value: 'Infinity' },
  { name: 'negative', value: '-1' },
  { name: 'SQL', value: "1' OR '1'='1'; DROP TABLE users; --" },
  { name: 'path', value: '../../../../etc/passwd' },
  { name: 'LIKE pattern', value: '%_%_%_%_'.repeat(1_000) },
]

/**
 * Traces of a stack, a source path or a module path: none may reach a client. Repetitions are
 * bounded: an unbounded `[\w/.-]+` before a fixed suffix backtracks quadratically on a long
 * answer (100 KB of letters took 50 s).
 */
export const LEAK =
  /node_modules|\/work\/|[\w/.-]{1,200}\.(?:ts|js):\d+|\bat [\w.<>]{1,200} \(|Error: .{0,500}\n\s+at /

export const DOCUMENTED_CODES = new Set(Object.keys(ERROR_CATALOGUE))

/** Problems with one answer, or [] when it is a proper api.php answer. */
export function answerProblems(answer: {
  status: number
  contentType: string | null
  body: Record<string, any>
  text: string
}): string[] {
  const problems: string[] = []
  if (answer.status !== 200) problems.push(`HTTP ${answer.status}`)
  if (answer.contentType !== 'application/json') problems.push(`Content-Type ${answer.contentType}`)
  if ('unparsable' in answer.body) problems.push('not JSON')
  else if (answer.body.status === 'nok') {
    if (!DOCUMENTED_CODES.has(answer.body.errorCode))
      problems.push(`undocumented errorCode ${answer.body.errorCode}`)
    if (answer.body.errorCode === 'INTERNAL_ERROR') problems.push(`INTERNAL_ERROR`)
    if (typeof answer.body.errorMsg !== 'string' || answer.body.errorMsg === '')
      problems.push('no errorMsg')
  } else if (answer.body.status !== 'ok') problems.push(`status ${answer.body.status}`)
  if (LEAK.test(answer.text)) problems.push('stack or path in the answer')
  return problems
}

/** Top-level parameter names of a compiled VineJS object schema. */
export function parametersOf(validator: VineValidator<any, any> | undefined): string[] {
  if (!validator) return []
  const schema = validator.toJSON().schema.schema as {
    type: string
    properties?: { fieldName: string }[]
    groups?: { conditions: { schema: { properties?: { fieldName: string }[] } }[] }[]
  }
  const names = new Set<string>()
  for (const property of schema.properties ?? []) names.add(property.fieldName)
  for (const group of schema.groups ?? [])
    for (const condition of group.conditions)
      for (const property of condition.schema.properties ?? []) names.add(property.fieldName)
  return [...names]
}

export async function registry() {
  return app.container.make(PluginRegistry)
}

/** Sends api.php parameters over `form`; a `raw` fragment is appended to a urlencoded body. */
export async function send(params: Record<string, unknown>, form: Form, raw?: string) {
  if (raw === undefined) return rpc(params, form)
  const body = new URLSearchParams(
    Object.entries(params).map(([key, value]): [string, string] => [key, String(value)])
  ).toString()
  return answerOf(
    await fetch(`${serverUrl()}/live/api.php`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `${body}&${raw}=${raw}`,
    })
  )
}

/**
 * A world for the hostile requests to aim at: a user with a session, a book
 * with a message, a table with a field, a row and a view, so that requests
 * with one bad parameter reach past the first lookup.
 */
export async function makeWorld() {
  const owner = await makeUser()
  const session = await login(owner)
  const call = async (req: string, params: Record<string, unknown>) => {
    const answer = await rpc({ req, ...credentials(session), ...params })
    if (answer.body.status !== 'ok')
      throw new Error(`fuzz world: ${req} failed: ${answer.text.slice(0, 300)}`)
    return answer.body
  }
  const bookCode = `fuzz${Date.now().toString(36)}`
  await call('createBook', { b_c: bookCode })
  const book = { b_o: owner.code, b_c: bookCode }
  const sent = await call('sendMsg', { ...book, msg: 'fuzz target' })
  const table = await call('createTable', { ...book, name: 'Fuzz', code: 'fuzz' })
  const field = await call('createField', {
    b_o: owner.code,
    catId: table.catId,
    name: 'Name',
    type: 'shorttext',
  })
  const rows = await call('createOrUpdateTableRows', {
    b_o: owner.code,
    rows: JSON.stringify({ tmp1: { [field.fieldId]: 'a' } }),
  })
  const view = await call('createView', {
    b_o: owner.code,
    catId: table.catId,
    name: 'All',
  }).catch(() => ({ viewId: 1 }))
  // A row token of the table: the token operations reach their row and field checks.
  const token = await call('createTableToken', {
    b_o: owner.code,
    catId: table.catId,
    rowId: rows.newRows[0].id,
  })
  /** A valid value for the parameters the world knows; others start absent. */
  const valid: Record<string, unknown> = {
    ...book,
    msg: 'hello',
    smid: sent.createMessageId,
    msg_id: sent.createMessageId,
    catId: table.catId,
    fieldId: field.fieldId,
    rowId: rows.newRows[0].id,
    viewId: view.viewId,
    value: 'v',
    name: 'n',
    token: token.token,
  }
  return { owner, session, book, valid }
}

export function credentials(session: Session) {
  return { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
}

/**
 * What a write leaves behind: the row count and highest stamp of every table of the kernel and
 * the plugins, and of the world's own smart table (`tt_<catId>` and its side tables, listed at
 * each call: a table created or dropped is a change too). A rejected request must leave it as
 * it was. Tables that record attempts on purpose (login throttling) are left out, and so are
 * the row tables of the earlier suites' smart tables: a world's requests name them only by a
 * hostile id of another owner's table, which the authorization suite covers (tests/authz).
 * Counting those (some 500 on MariaDB by then) after every hostile write took most of the API
 * fuzz suite's six minutes there, while the table of every world but the first went uncounted.
 */
let kernelSql: string[] | null = null
const worldsSeen = new Set<number>()
/** Table name -> its counting SELECT (whether it has a stamp column is read once). */
const countingSelects = new Map<string, string>()
/** SQLite allows at most 500 terms in one compound SELECT: the tables are counted in chunks. */
const FINGERPRINT_CHUNK = 200
export async function fingerprint(world: { valid: Record<string, unknown> }): Promise<string> {
  const { db, mysql } = await database()
  const catId = Number(world.valid.catId)
  if (!kernelSql) {
    const parts = await countingParts(await tableNames())
    kernelSql = []
    for (let start = 0; start < parts.length; start += FINGERPRINT_CHUNK)
      kernelSql.push(parts.slice(start, start + FINGERPRINT_CHUNK).join(' union all '))
  }
  const worldTables = await tableNames(catId)
  if (!worldsSeen.has(catId) && !worldTables.includes(`tt_${catId}`))
    throw new Error(`fuzz fingerprint: no table tt_${catId} to count`)
  worldsSeen.add(catId)
  const worldParts = await countingParts(worldTables)
  const lines: string[] = []
  for (const sql of [
    ...kernelSql,
    ...(worldParts.length ? [worldParts.join(' union all ')] : []),
  ]) {
    const result = await db.rawQuery(sql)
    const rows = (mysql ? result[0] : result) as { t: string; c: number; s: number | null }[]
    for (const row of rows) lines.push(`${row.t}:${row.c}:${row.s ?? ''}`)
  }
  return lines.join(',')
}

/**
 * The tables a fingerprint counts: with a category, that smart table's own (its row table and
 * side tables), else every table but the smart tables'. Throttling tables and FTS5's shadow
 * tables (they follow their row table, which is counted) are left out.
 */
async function tableNames(catId?: number): Promise<string[]> {
  const { db, mysql } = await database()
  const own = catId === undefined ? '' : `tt_${catId}`
  const listed = mysql
    ? await db.rawQuery(
        `select table_name as name from information_schema.tables where table_schema = database()${own ? ' and (table_name = ? or table_name like ?)' : ''}`,
        own ? [own, `${own}\\_%`] : []
      )
    : await db.rawQuery(
        `select name from sqlite_master where type = 'table' and name not like 'sqlite_%'${own ? " and (name = ? or name like ? escape '\\')" : ''}`,
        own ? [own, `${own}\\_%`] : []
      )
  const names = ((mysql ? listed[0] : listed) as { name: string }[]).map((row) => row.name)
  return names
    .filter((name) => (own ? true : !name.startsWith('tt_')))
    .filter((name) => !/adonis_schema|limiter|throttle|attempt|rate_limit/i.test(name))
    .filter((name) => !/^tt_\d+_fts_/.test(name))
    .sort()
}

/** The app's database service (imported once the app has booted) and whether it is MariaDB. */
async function database() {
  const { default: db } = await import('@adonisjs/lucid/services/db')
  return { db, mysql: db.primaryConnectionName === 'mysql' }
}

/** One SELECT a table: its name, row count and highest stamp. */
async function countingParts(names: string[]): Promise<string[]> {
  const { db, mysql } = await database()
  const parts: string[] = []
  for (const name of names) {
    let select = countingSelects.get(name)
    if (!select) {
      const columns = await db.connection().columnsInfo(name)
      const stamp = 'sstamp' in columns ? 'max(sstamp)' : 'null'
      select = `select '${name}' as t, count(*) as c, ${stamp} as s from ${mysql ? `\`${name}\`` : `"${name}"`}`
      countingSelects.set(name, select)
    }
    parts.push(select)
  }
  return parts
}

/**
 * Waits (up to 5 s) until no job is waiting or running: writes made by jobs are over. Delayed
 * jobs are not waited for: earlier suites leave some due minutes or hours ahead (reminders,
 * delivery retries with backoff), and waiting 5 s for them before every case made the fuzz
 * suites take most of CI's budget; none of them falls due within a case.
 */
export async function settled() {
  const { QueueService } = await import('#core/services/queue_service')
  const queue = await app.container.make(QueueService)
  for (let attempt = 0; attempt < 100; attempt++) {
    const counts = (await queue.counts()) as Record<string, number>
    if ((counts.waiting ?? 0) + (counts.active ?? 0) === 0) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Collects what reaches logger.error while installed: the server log must show no unhandled error. */
export async function watchErrors() {
  const logger = await app.container.make('logger')
  const original = logger.error.bind(logger)
  const seen: string[] = []
  logger.error = ((...args: unknown[]) => {
    seen.push(
      JSON.stringify(args, (_key, value) => (value instanceof Error ? value.stack : value)).slice(
        0,
        400
      )
    )
    return (original as (...a: unknown[]) => void)(...args)
  }) as typeof logger.error
  return {
    take: () => seen.splice(0, seen.length),
    restore: () => (logger.error = original),
  }
}
