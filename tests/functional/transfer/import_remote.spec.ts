import { test } from '@japa/runner'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import ImportRemote from '../../../commands/import_remote.js'
import ImportArchive from '../../../commands/import_archive.js'
import ExportBook from '../../../commands/export_book.js'
import { ApiSource } from '#core/transfer/transfer_source'
import { LocalClient, RemoteClient, localActor } from '#core/transfer/interface_client'
import { ArchiveSource } from '#core/transfer/book_archive'
import { UserService } from '#core/services/user_service'
import type User from '#models/user'
import { childEnv } from '#tests/helpers/child_env'
import { onMysql } from '#tests/helpers/database'
import { makeUser, TEST_PASSWORD } from '#tests/helpers/users'
import { ROOT, startQuire, type QuireProcess } from '../../../bench/lib/quire_process.js'
import {
  call,
  seedSource,
  signIn,
  upload,
  DOC,
  type ApiSession,
  type SourceIds,
} from './source_data.js'
import { snapshotOf } from './snapshot.js'

/**
 * import:remote from a second Quire instance (a child server with its own database: its own
 * SQLite file, or its own MariaDB database) into the test server's, then export / import:archive.
 * The commands run in this process, as an operator runs them; their JSON reports are read back.
 */

let source: QuireProcess
let dropSource: () => Promise<void> = async () => {}
let owner: ApiSession
let ids: SourceIds
const memberCode = `m${randomBytes(4).toString('hex')}`
const ownerCode = `o${randomBytes(4).toString('hex')}`
const ownerEmail = `${ownerCode}@example.test`
let work = ''

function aceIn(env: NodeJS.ProcessEnv, ...args: string[]) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['ace', ...args], { cwd: ROOT, env, stdio: 'pipe' })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`ace ${args[0]} failed: ${output}`))
    )
  })
}

/** Runs one of the transfer commands in this process; answers its exit code and JSON report. */
async function runCommand(Command: any, args: string[]) {
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  const reportFile = join(work, `report-${randomBytes(4).toString('hex')}.json`)
  const command = await ace.create(
    Command,
    Command === ExportBook ? args : [...args, '--report', reportFile]
  )
  await command.exec()
  const report = existsSync(reportFile) ? JSON.parse(await readFile(reportFile, 'utf8')) : null
  return { exitCode: command.exitCode ?? 0, report, logs: command.ui.logger.getLogs() }
}

const remoteArgs = (as: User, ...extra: string[]) => [
  '--base-url',
  source.url,
  '--login',
  ownerEmail,
  '--password',
  TEST_PASSWORD,
  '--as',
  as.code,
  '--state',
  join(work, `state-${as.code}.json`),
  ...extra,
]

async function remoteSnapshot() {
  const client = new RemoteClient(source.url)
  await client.signIn({ o_u: owner.o_u, sesskey: owner.sesskey })
  return snapshotOf(new ApiSource(client, source.url), ids.b_o, ids.b_c)
}

const localSnapshot = (user: User, b_c = ids.b_c) =>
  snapshotOf(new ApiSource(new LocalClient(localActor(user)), 'local'), user.code, b_c)

test.group('Transfer: import from a compatible server', (group) => {
  group.setup(async () => {
    work = await mkdtemp(join(tmpdir(), 'quire-transfer-test-'))
    let env: NodeJS.ProcessEnv
    if (onMysql()) {
      const database = `quire_test_import24_src_${randomBytes(3).toString('hex')}`
      await db.rawQuery(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`)
      env = childEnv({
        DB_DATABASE: database,
        REDIS_PREFIX: `quire_import24_src_${database.slice(-6)}:`,
      })
      dropSource = async () => {
        await db.rawQuery(`DROP DATABASE IF EXISTS \`${database}\``)
      }
    } else {
      env = childEnv({}, { embedded: true })
    }
    const dataDir = env.DATA_DIR!
    const previousDrop = dropSource
    dropSource = async () => {
      await previousDrop()
      await rm(dataDir, { recursive: true, force: true })
    }
    const cleanup = async () => {
      await source?.stop()
      await dropSource()
      await rm(work, { recursive: true, force: true })
    }
    try {
      await aceIn(env, 'migration:run', '--force')
      await Promise.all([
        aceIn(env, 'user:create', ownerCode, ownerEmail, TEST_PASSWORD),
        aceIn(env, 'user:create', memberCode, `${memberCode}@example.test`, TEST_PASSWORD),
      ])
      source = await startQuire(env)
      owner = await signIn(source.url, ownerEmail, TEST_PASSWORD)
      ids = await seedSource(source.url, owner, 'transfer', memberCode)
      // The member is a local user too: the invitation finds them here.
      const users = await app.container.make(UserService)
      await users.create({
        code: memberCode,
        email: `${memberCode}@example.test`,
        password: TEST_PASSWORD,
        firstName: 'Member',
        lastName: 'Here',
      })
    } catch (error) {
      // A failed setup leaves no database, folder or server behind.
      await cleanup()
      throw error
    }
    return cleanup
  })

  test('copies every book the account sees, field by field, with members as invitations', async ({
    assert,
  }) => {
    const dest = await makeUser()
    const { exitCode, report } = await runCommand(ImportRemote, remoteArgs(dest))
    assert.equal(exitCode, 0)
    assert.isFalse(report.stopped)
    assert.deepEqual(report.problems, [])
    assert.deepEqual(report.mapping[`${ids.b_o}/${ids.b_c}`], { b_o: dest.code, b_c: ids.b_c })
    assert.include(report.counts, {
      books: 1,
      invitations: 1,
      messages: 4,
      files: 3,
      tables: 2,
      rows: 9,
      comments: 2,
    })

    const [remote, local] = await Promise.all([remoteSnapshot(), localSnapshot(dest)])
    assert.deepEqual(local, remote)
    // What the comparison holds: the seeded kinds of data, not an empty book equal to another.
    assert.lengthOf(local.messages, 4)
    assert.isNotNull(local.messages[1].event)
    assert.lengthOf(local.messages[2].medias, 2)
    assert.isNotNull(local.messages[2].medias[0].sha)
    assert.lengthOf(local.tables[1].rows[0].Files as unknown[], 1)
    assert.deepEqual(local.tables[1].rows[1].Talk, ['first comment', 'second comment'])
    assert.deepEqual(local.tables[1].rows[0].Owner, ['Ada'])
    assert.equal(local.tables[1].views[1].filters[0].field, 'Tasks.State')

    const member = await app.container
      .make(UserService)
      .then((users) => users.findByLogin(memberCode))
    const seen = await new LocalClient(localActor(member!)).call('getAllBooks', {})
    const invited = seen.allBooks.books.find(
      (book: any) => book.b_o === dest.code && book.b_c === ids.b_c
    )
    assert.isDefined(invited)
    assert.isFalse(invited.accepted)
  }).timeout(120_000)

  test('an interrupted import continues where it stopped, without doubles', async ({ assert }) => {
    const dest = await makeUser()
    // An existing session (o_u + sesskey) instead of a login.
    const args = [
      '--base-url',
      source.url,
      '--o-u',
      owner.o_u,
      '--sesskey',
      owner.sesskey,
      '--as',
      dest.code,
      '--state',
      join(work, `resume-${dest.code}.json`),
    ]
    const first = await runCommand(ImportRemote, [...args, '--stop-after', '6'])
    assert.equal(first.exitCode, 0)
    assert.isTrue(first.report.stopped)
    const state = JSON.parse(await readFile(join(work, `resume-${dest.code}.json`), 'utf8'))
    assert.property(state.books, `${ids.b_o}/${ids.b_c}`)

    const second = await runCommand(ImportRemote, [...args, '--stop-after', '14'])
    assert.isTrue(second.report.stopped)
    // Stopped between the tables' rows (the seeded book's writes: views, tabs, then People's
    // rows): those rows are in the rows journal, Tasks' not yet.
    const third = await runCommand(ImportRemote, [...args, '--stop-after', '6'])
    assert.isTrue(third.report.stopped)
    assert.isAbove(third.report.counts.rows, 0)
    const last = await runCommand(ImportRemote, args)
    assert.equal(last.exitCode, 0)
    assert.isFalse(last.report.stopped)
    assert.deepEqual(last.report.problems, [])
    // Each source row written once over the runs: the resume found the first ones in the journal.
    assert.isAbove(last.report.counts.rows, 0)
    let total = 0
    for (const catId of [ids.people, ids.tasks]) {
      const count = await call(source.url, owner, {
        req: 'computeTableOperation',
        b_o: ids.b_o,
        catId,
        operation: 'count',
      })
      total += count.result
    }
    const runs = [first, second, third, last]
    assert.equal(
      runs.reduce((sum, run) => sum + (run.report.counts.rows ?? 0), 0),
      total
    )
    assert.isAbove(last.report.counts.comments, 1)
    assert.deepEqual(await localSnapshot(dest), await remoteSnapshot())
  }).timeout(180_000)

  test('rows a killed batch created without recording them are removed on the next run', async ({
    assert,
  }) => {
    const dest = await makeUser()
    const args = remoteArgs(dest)
    const statePath = args[args.indexOf('--state') + 1]
    const first = await runCommand(ImportRemote, args)
    assert.equal(first.exitCode, 0)

    // What a kill between a batch's write and its record leaves: a row no mapping names, and
    // the batch's intent line in the rows journal without its settled line.
    const local = new LocalClient(localActor(dest))
    const tables = await local.call('getBookTables', { b_o: dest.code, b_c: ids.b_c })
    const tasks = tables.bookTables.categories.find((category: any) => category.name === 'Tasks')
    await local.call('createOrUpdateTableRows', {
      b_o: dest.code,
      catId: tasks.id,
      rows: { tmpOrphan: {} },
    })
    await appendFile(
      `${statePath}.rows.jsonl`,
      `${JSON.stringify(['#intent', `${ids.b_o}/${ids.b_c}`, String(ids.tasks)])}\n`
    )

    const again = await runCommand(ImportRemote, args)
    assert.equal(again.exitCode, 0)
    assert.deepEqual(again.report.counts, { 'orphan rows removed': 1 })
    assert.deepEqual(await localSnapshot(dest), await remoteSnapshot())
  }).timeout(120_000)

  test('a second run writes nothing, a run after changes writes only the changes', async ({
    assert,
  }) => {
    const dest = await makeUser()
    const first = await runCommand(ImportRemote, remoteArgs(dest))
    assert.equal(first.exitCode, 0)

    const again = await runCommand(ImportRemote, remoteArgs(dest))
    assert.equal(again.exitCode, 0)
    assert.deepEqual(again.report.counts, {})
    assert.deepEqual(again.report.problems, [])

    // Changes on the source: the title, a field's name, a view's name, a new message, an edit, a delete, a row changed, one
    // added, one deleted, a comment and a cell file added.
    const book = { b_o: ids.b_o, b_c: ids.b_c }
    const api = (params: Record<string, unknown>) => call(source.url, owner, params)
    await api({ req: 'updateBook', ...book, title: 'Book transfer, renamed' })
    await api({ req: 'updateField', ...book, fieldId: ids.fields.Notes, name: 'Remarks' })
    const views = await api({ req: 'getBookTables', ...book })
    const open = views.bookTables.categories
      .find((category: any) => category.id === ids.tasks)
      .views.find((view: any) => view.name === 'Open')
    await api({ req: 'updateView', ...book, viewId: open.id, name: 'Still open' })
    await api({ req: 'sendMsg', ...book, msg: 'news after the first import' })
    const listed = await api({ req: 'getBookMessages', ...book })
    const byText = (text: string) => listed.bookMessages.find((m: any) => m.msg === text).smid
    await api({
      req: 'sendMsg',
      ...book,
      msg_id: byText('first message'),
      msg: 'first message, edited',
    })
    await api({ req: 'deleteMsg', ...book, msg_id: byText('a meeting'), msg: '' })
    await api({
      req: 'createOrUpdateTableRows',
      ...book,
      catId: ids.tasks,
      rows: {
        [ids.rows[2]]: { [ids.fields.Title]: 'Task 2, renamed' },
        tmpNew: { [ids.fields.Title]: 'Task 7' },
      },
    })
    await api({ req: 'deleteTableRow', ...book, rowId: ids.rows[6] })
    await api({
      req: 'editTableValueComments',
      ...book,
      fieldId: ids.fields.Talk,
      rowId: ids.rows[1],
      m: 'third comment',
    })
    await upload(
      source.url,
      owner,
      { ...book, rowId: ids.rows[3], fieldId: ids.fields.Files },
      DOC,
      'more.pdf',
      'application/pdf'
    )

    const third = await runCommand(ImportRemote, remoteArgs(dest))
    assert.equal(third.exitCode, 0)
    assert.deepEqual(third.report.problems, [])
    assert.deepEqual(third.report.counts, {
      'books updated': 1,
      'fields updated': 1,
      'views updated': 1,
      'messages deleted': 1,
      'messages': 1,
      'messages updated': 1,
      'rows': 3,
      'rows deleted': 1,
      'comments': 1,
      'files': 1,
    })
    assert.deepEqual(await localSnapshot(dest), await remoteSnapshot())
  }).timeout(180_000)

  test('export then import:archive gives the same book, field by field', async ({ assert }) => {
    const from = await makeUser()
    const copied = await runCommand(ImportRemote, remoteArgs(from))
    assert.equal(copied.exitCode, 0)
    const archive = join(work, `${from.code}.tar.gz`)
    const exported = await runCommand(ExportBook, [`${from.code}/${ids.b_c}`, '--out', archive])
    assert.equal(exported.exitCode, 0)
    assert.isTrue(existsSync(archive))

    // The archive itself reads back as the book.
    const reader = await ArchiveSource.open(archive)
    try {
      assert.deepEqual(await snapshotOf(reader, from.code, ids.b_c), await localSnapshot(from))
    } finally {
      await reader.close()
    }

    const to = await makeUser()
    const state = join(work, `archive-${to.code}.json`)
    const imported = await runCommand(ImportArchive, [archive, '--as', to.code, '--state', state])
    assert.equal(imported.exitCode, 0)
    assert.deepEqual(imported.report.problems, [])
    assert.deepEqual(await localSnapshot(to), await localSnapshot(from))

    const again = await runCommand(ImportArchive, [archive, '--as', to.code, '--state', state])
    assert.deepEqual(again.report.counts, {})
  }).timeout(180_000)

  test('refuses what it cannot read, without writing', async ({ assert }) => {
    const dest = await makeUser()
    const bogus = join(work, 'not-an-archive.tar.gz')
    await writeFile(bogus, 'plain text, not gzip')
    const bad = await runCommand(ImportArchive, [bogus, '--as', dest.code])
    assert.equal(bad.exitCode, 1)
    const wrongPassword = await runCommand(ImportRemote, [
      '--base-url',
      source.url,
      '--login',
      ownerEmail,
      '--password',
      'not the password',
      '--as',
      dest.code,
    ])
    assert.equal(wrongPassword.exitCode, 1)
    const nobody = await runCommand(ImportArchive, [bogus, '--as', 'no-such-user-here'])
    assert.equal(nobody.exitCode, 1)
    const seen = await new LocalClient(localActor(dest)).call('getAllBooks', {})
    assert.lengthOf(seen.allBooks.books, 0)
  }).timeout(60_000)
})
