/**
 * bench:tables — seeds a 1,000,000-row smart table (12 fields, including a
 * link and a lookup into a 10,000-row table) and 1,000,000 cell history
 * entries, then measures the tables plugin over HTTP against the compiled
 * server (what `npm start` serves), started twice on the same database: cell
 * history on (the default) and off (TABLES_HISTORY=false), so that history's
 * cost is measured in alternating rounds.
 *
 *   npm run bench:tables                       # SQLite in tmp/bench-tables
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench npm run bench:tables
 *   BENCH_ROWS=20000 npm run bench:tables      # a smaller run (under a minute)
 *   BENCH_REUSE=1 npm run bench:tables         # measure again on the previous run's data
 *   BENCH_ONLY=updates BENCH_WRITERS=1,8 npm run bench:tables   # some groups, some concurrencies
 *
 * Settings: BENCH_ROWS, BENCH_COMPANIES (10,000), BENCH_HISTORY (cell history entries, as many
 * as rows), BENCH_TEXT_INDEX (0: MariaDB's text indexes left unbuilt, for BENCH_ONLY=pages: a
 * 10M-row build takes hours here), TABLES_COUNTERS_MIN_ROWS (the server's), BENCH_UPDATES (3,000 updateTableValue per round), BENCH_HISTORY_ROUNDS (5 rounds
 * each, history on and off), BENCH_WRITERS (8 concurrent clients), BENCH_BUILD_DIR (the compiled
 * build, tmp/bench-build), BENCH_NODE_OPTIONS (for the servers: `--cpu-prof`), BENCH_BEFORE_SERVER
 * (another build's bin/server.js, measured in the same rounds: before/after).
 * The database is migrated fresh (migration:fresh) before seeding, unless BENCH_REUSE=1
 * (each run adds rows through createOrUpdateTableRows).
 */
import 'reflect-metadata'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import cliProgress from 'cli-progress'
import { apiClient } from './lib/api_client.js'
import {
  benchEnv,
  buildCompiled,
  signIn,
  startQuire,
  type QuireProcess,
} from './lib/quire_process.js'
import { bootSeedingApp } from './lib/seeding_app.js'

const APP_ROOT = new URL('../', import.meta.url)
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 10_000)
/** Cell history entries seeded (as many as rows by default), on the first HISTORY_ROWS rows. */
const HISTORY = Number(process.env.BENCH_HISTORY ?? ROWS)
const HISTORY_ROWS = Math.min(ROWS, 10_000)
const HISTORY_ROWS_PAGES = Math.max(1, Math.floor(HISTORY_ROWS / 100))
process.env.DATA_DIR = process.env.DATA_DIR ?? 'tmp/bench-tables'
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'warn'
mkdirSync(process.env.DATA_DIR, { recursive: true })

const REUSE = process.env.BENCH_REUSE === '1'
if (!REUSE)
  execFileSync('node', ['ace', 'migration:fresh', '--force'], {
    stdio: 'inherit',
    env: process.env,
    cwd: new URL('.', APP_ROOT).pathname,
  })

const app = await bootSeedingApp(APP_ROOT)

const { default: db } = await import('@adonisjs/lucid/services/db')
const { UserService } = await import('#core/services/user_service')
const { StampService } = await import('#core/services/stamp_service')
const users = await app.container.make(UserService)
const stamps = await app.container.make(StampService)
const { RowWriter } = await import('#plugins/tables/services/row_writer')
const { MetaService } = await import('#plugins/tables/services/meta_service')
const rowWriter = await app.container.make(RowWriter)
const metaService = await app.container.make(MetaService)
const { rowTableName, sideTableName, formatDateTime } =
  await import('#plugins/tables/lib/field_types')
const { DateTime } = await import('luxon')

const dialect = db.connection().dialect.name
console.log(
  `\nbench:tables on ${dialect}, ${ROWS.toLocaleString('en')} rows, ${COMPANIES.toLocaleString('en')} linked rows\n`
)

const words = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
]
const cities = ['Paris', 'Lyon', 'Nantes', 'Lille', 'Brest', 'Nice', 'Metz', 'Dijon']
const statuses = ['new', 'open', 'won', 'lost', 'frozen']

/** The bench user and its book (before the servers start: they sign the user in). */
async function seedUser() {
  const user = await users.create({
    code: 'bench',
    email: 'bench@example.test',
    phone: '+33600000000',
    password: 'bench-password',
    firstName: 'Bench',
    lastName: 'User',
    isAdmin: false,
  })
  const now = DateTime.now().toSQL({ includeOffset: false })
  const [bookId] = await db
    .table('books')
    .insert({ owner_id: user.id, code: 'bench', created_at: now })
  await db
    .table('book_members')
    .insert({ book_id: bookId, user_id: user.id, invite: 'accepted', right: 4, created_at: now })
}
if (!REUSE) await seedUser()

// ---- the servers: the compiled build, history on and off, on this database ----------
const compiled = buildCompiled()
// Absolute: a build elsewhere (BENCH_BEFORE_SERVER) resolves a relative data folder from its own root.
const serverEnv = benchEnv({ DATA_DIR: resolve(process.env.DATA_DIR) })
const serverOn = await startQuire({ ...serverEnv, TABLES_HISTORY: 'true' }, { compiled })
const serverOff = await startQuire({ ...serverEnv, TABLES_HISTORY: 'false' }, { compiled })
/**
 * BENCH_BEFORE_SERVER: the bin/server.js of another build (an earlier commit's, made with its own
 * `node bin/start.js --build-only`), started too with history on and measured in the same
 * alternating rounds as `before`: a before/after comparison under the same load.
 */
const BEFORE = process.env.BENCH_BEFORE_SERVER
const serverBefore = BEFORE
  ? await startQuire({ ...serverEnv, TABLES_HISTORY: 'true' }, { compiled: BEFORE })
  : null
const session = await signIn(serverOn.url, 'bench@example.test', 'bench-password')
const WRITERS = (process.env.BENCH_WRITERS ?? '8').split(',').map(Number)
const clientOn = apiClient(serverOn.url, session, Math.max(16, ...WRITERS))
const clientOff = apiClient(serverOff.url, session, Math.max(16, ...WRITERS))
const clientBefore = serverBefore
  ? apiClient(serverBefore.url, session, Math.max(16, ...WRITERS))
  : null
/** The server `api` calls: history on, or BENCH_BEFORE_SERVER's while timeit measures it. */
let apiCall = clientOn.call
const api = (...args: Parameters<typeof clientOn.call>) => apiCall(...args)
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
type Mode = 'on' | 'off' | 'before'
/** Each server with its client: `on` records cell history, `off` does not, `before` is BEFORE's. */
const modes: Partial<Record<Mode, { server: QuireProcess; call: typeof api }>> = {
  on: { server: serverOn, call: clientOn.call },
  off: { server: serverOff, call: clientOff.call },
  ...(serverBefore && clientBefore
    ? { before: { server: serverBefore, call: clientBefore.call } }
    : {}),
}
const modeList = Object.keys(modes) as Mode[]
/** Rounds in rotating order (on, off, before; off, before, on; ...): all see the same load. */
const alternate = (i: number): Mode[] => modeList.map((_, j) => modeList[(i + j) % modeList.length])
const emptyRounds = () =>
  Object.fromEntries(modeList.map((mode) => [mode, []])) as unknown as Record<Mode, Measured[]>

/**
 * A load's rate (per second of wall time) and the server's CPU time per unit of work (ms): on a
 * shared machine the rate follows the load of everything else; the CPU time per unit much less.
 */
interface Measured {
  rate: number
  cpu: number
}
async function measure(mode: Mode, units: number, load: () => Promise<unknown>): Promise<Measured> {
  const { server } = modes[mode]!
  const cpu0 = server.cpuMs()
  const t0 = performance.now()
  await load()
  const seconds = (performance.now() - t0) / 1000
  return { rate: units / seconds, cpu: (server.cpuMs() - cpu0) / units }
}
/** Median rate and median CPU time per unit of each mode's rounds, printed side by side. */
function compare(rounds: Record<Mode, Measured[]>, unit: string, cpuUnit: string) {
  const of = (mode: Mode) => ({
    rate: median(rounds[mode].map((entry) => entry.rate)),
    cpu: median(rounds[mode].map((entry) => entry.cpu)),
  })
  const on = of('on')
  const off = of('off')
  const before = rounds.before ? of('before') : null
  return (
    `${on.rate.toFixed(0)}${unit} history on, ${off.rate.toFixed(0)}${unit} off ` +
    `(on = ${((on.rate / off.rate) * 100).toFixed(0)} % of off); server CPU ` +
    `${on.cpu.toFixed(3)} / ${off.cpu.toFixed(3)} ms${cpuUnit}` +
    (before
      ? `; before (BENCH_BEFORE_SERVER, history on): ${before.rate.toFixed(0)}${unit}, CPU ${before.cpu.toFixed(3)} ms`
      : '')
  )
}

/**
 * Seeds the fixture: Companies and Contacts made over HTTP, their rows and the cell history
 * inserted in this process (bulk inserts through the storage layer), then a saved view.
 */
async function seed() {
  const { default: User } = await import('#models/user')
  const user = await User.findByOrFail('code', 'bench')
  // ---- structure ---------------------------------------------------------------
  const companies = await api('createTable', {
    b_o: 'bench',
    b_c: 'bench',
    name: 'Companies',
    fields: [
      { name: 'Name', type: 'shorttext' },
      { name: 'Size', type: 'integer' },
    ],
  })
  const companiesCatId = Number(companies.catId)
  const main = await api('createTable', { b_o: 'bench', b_c: 'bench', name: 'Contacts' })
  const cid = Number(main.catId)
  const companyFields = (await metaService.category(companiesCatId))!.category.fields
  const add = async (name: string, type: string, options: Record<string, unknown> = {}) => {
    const { fieldId } = await api('createField', { catId: cid, name, type, options })
    return Number(fieldId)
  }
  const F = {
    name: await add('Name', 'shorttext'),
    notes: await add('Notes', 'mediumtext'),
    price: await add('Price', 'double'),
    qty: await add('Qty', 'integer'),
    day: await add('Day', 'date'),
    active: await add('Active', 'checkbox'),
    status: await add('Status', 'enum', { values: ['new', 'open', 'won', 'lost', 'frozen'] }),
    email: await add('Email', 'email'),
    city: await add('City', 'shorttext'),
    score: await add('Score', 'double'),
    company: await add('Company', 'link', { linkCatId: companiesCatId }),
    companySize: 0,
  }
  F.companySize = await add('Company size', 'lookup', {
    linkFieldId: F.company,
    targetFieldId: companyFields[1].id,
  })
  const meta = (await metaService.category(cid))!.category
  const col = (id: number) => meta.fields.find((field) => field.id === id)!.column!

  // ---- seeding (bulk inserts through the storage layer) -----------------------
  const bar = new cliProgress.SingleBar(
    {
      format: 'seeding {table} [{bar}] {percentage}% | {value}/{total} rows | {duration}s',
      // Into a file or a pipe too (a long run's log), every 10 s.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic
  )
  const BATCH = dialect === 'mysql' ? 2000 : 1000
  /**
   * Rows are inserted with their final `ord` (= id, as the write path gives new rows): the ids
   * of a batch follow the previous batch's, so only a batch whose ids were not the predicted
   * ones (the first) is corrected by an UPDATE. Rewriting `ord` of the whole table afterwards
   * left a million delete-marked entries at the head of MariaDB's (ord, id) index, which every
   * first-page read skipped until purge caught up (18-22 ms pages right after seeding).
   */
  const nextIds = new Map<string, number>()
  /**
   * MariaDB: the text indexes' triggers (plugins/tables/services/text_index_mysql.ts) fill a
   * gram table per indexed column row by row, which held bulk inserts to ~300 rows/s (10M rows:
   * 9 hours). The indexes are dropped for the seeding, then built for the existing rows by the
   * operator's command (`node ace tables:index-text`: the table and its triggers, then the rows
   * in batches), timed apart; checkTextIndexes then checks that every indexable column has a
   * complete, ready index with its three triggers before anything is measured.
   */
  const rebuildTextIndexes = dialect === 'mysql'
  // BENCH_TEXT_INDEX=0 (MariaDB): the indexes stay dropped (a 10M-row build takes hours on this
  // machine): for the measures that do not search text (BENCH_ONLY=pages).
  const buildTextIndexes = process.env.BENCH_TEXT_INDEX !== '0'
  if (rebuildTextIndexes) {
    const { dropTextIndexes } = await import('#plugins/tables/services/text_index')
    await dropTextIndexes(companiesCatId)
    await dropTextIndexes(cid)
  }
  const ordOf = (table: string, index: number) =>
    nextIds.has(table) ? nextIds.get(table)! + index : 0
  const insertRows = async (trx: any, table: string, rows: Record<string, unknown>[]) => {
    const ids = await rowWriter.insertBatch(trx, table, rows)
    if (ids[0] !== nextIds.get(table))
      await trx.rawQuery('UPDATE ?? SET ord = id WHERE id >= ? AND id <= ?', [
        table,
        ids[0],
        ids[ids.length - 1],
      ])
    nextIds.set(table, ids[ids.length - 1] + 1)
    return ids
  }
  const at = formatDateTime(new Date())
  const companyIds: number[] = []
  const companySize: number[] = []
  const companyName: string[] = []

  bar.start(COMPANIES, 0, { table: 'Companies' })
  for (let start = 0; start < COMPANIES; start += BATCH) {
    const count = Math.min(BATCH, COMPANIES - start)
    await stamps.write(async ({ trx, stamp }) => {
      const rows = Array.from({ length: count }, (_, i) => {
        const n = start + i
        companyName.push(`Company ${n}`)
        companySize.push((n * 37) % 5000)
        return {
          ord: ordOf(rowTableName(companiesCatId), i),
          sstamp: stamp,
          created_at: at,
          updated_at: at,
          created_by: user.code,
          updated_by: user.code,
          [companyFields[0].column!]: `Company ${n}`,
          [companyFields[1].column!]: (n * 37) % 5000,
        }
      })
      const ids = await insertRows(trx, rowTableName(companiesCatId), rows)
      companyIds.push(...ids)
    })
    bar.update(start + count)
  }
  bar.stop()

  const seedStart = performance.now()
  bar.start(ROWS, 0, { table: 'Contacts' })
  for (let start = 0; start < ROWS; start += BATCH * 10) {
    await stamps.write(async ({ trx, stamp }) => {
      for (let chunk = start; chunk < Math.min(ROWS, start + BATCH * 10); chunk += BATCH) {
        const count = Math.min(BATCH, ROWS - chunk)
        const links: number[] = []
        const rows = Array.from({ length: count }, (_, i) => {
          const n = chunk + i
          const company = (n * 7919) % COMPANIES
          links.push(company)
          return {
            ord: ordOf(rowTableName(cid), i),
            sstamp: stamp,
            created_at: at,
            updated_at: at,
            created_by: user.code,
            updated_by: user.code,
            [col(F.name)]: `${words[n % 12]} ${words[(n >> 4) % 12]} ${n}`,
            [col(F.notes)]: `note ${n} ${words[(n >> 2) % 12]}`,
            [col(F.price)]: (n % 10000) / 100,
            [col(F.qty)]: n % 100,
            [col(F.day)]: formatDateTime(
              new Date(Date.UTC(2020, 0, 1) + (n % 2000) * 86_400_000),
              false
            ),
            [col(F.active)]: n % 3 === 0,
            [col(F.status)]: statuses[n % 5],
            [col(F.email)]: `user${n}@example.test`,
            [col(F.city)]: cities[n % 8],
            [col(F.score)]: (n * 13) % 1000,
            [col(F.company)]: JSON.stringify([companyIds[company]]),
            [`${col(F.company)}_t`]: companyName[company],
            [col(F.companySize)]: String(companySize[company]),
          }
        })
        const ids = await insertRows(trx, rowTableName(cid), rows)
        await rowWriter.insertPlain(
          trx,
          sideTableName(cid, F.company),
          ids.map((id, i) => ({ row_id: id, value: companyIds[links[i]], pos: 0 }))
        )
        bar.update(chunk + count)
      }
    })
  }
  bar.stop()
  console.log(`seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)
  if (rebuildTextIndexes && buildTextIndexes) {
    const indexStart = performance.now()
    execFileSync('node', ['ace', 'tables:index-text', String(companiesCatId), String(cid)], {
      stdio: 'inherit',
      env: process.env,
      cwd: new URL('.', APP_ROOT).pathname,
    })
    console.log(
      `text indexes built in ${((performance.now() - indexStart) / 1000).toFixed(1)} s (tables:index-text)`
    )
    await checkTextIndexes([companiesCatId, cid])
    const { gramTables, gramTableName } = await import('#plugins/tables/services/text_index_mysql')
    for (const column of await gramTables(cid))
      await db.rawQuery('ANALYZE TABLE ??', [gramTableName(cid, column)]) // sizes for the print
  }

  // Cell history: HISTORY entries of updateTableValue on Qty, spread over the first HISTORY_ROWS
  // rows (the pages the activity measure reads), as the write path records them.
  const historyStart = performance.now()
  const firstContact = nextIds.get(rowTableName(cid))! - ROWS
  const createdAt = Math.floor(Date.now() / 1000)
  bar.start(HISTORY, 0, { table: 'cell history' })
  for (let start = 0; start < HISTORY; start += BATCH * 10) {
    await stamps.write(async ({ trx, stamp }) => {
      for (let chunk = start; chunk < Math.min(HISTORY, start + BATCH * 10); chunk += BATCH) {
        const count = Math.min(BATCH, HISTORY - chunk)
        const entries = Array.from({ length: count }, (_, i) => {
          const n = chunk + i
          return {
            category_id: cid,
            row_id: firstContact + (n % HISTORY_ROWS),
            field_id: F.qty,
            field_type: 'integer',
            write_id: `seed${n.toString(16).padStart(20, '0')}`,
            action: 'update',
            operation: 'updateTableValue',
            user_id: user.id,
            user_code: user.code,
            principal_id: null,
            principal_code: null,
            sstamp: stamp,
            created_at: createdAt,
            old_value: JSON.stringify(String(n % 100)),
            new_value: JSON.stringify(String((n + 1) % 100)),
          }
        })
        await rowWriter.insertPlain(trx, 'table_cell_history', entries)
        bar.update(chunk + count)
      }
    })
  }
  bar.stop()
  console.log(`history seeded in ${((performance.now() - historyStart) / 1000).toFixed(1)} s`)
  for (const table of [rowTableName(companiesCatId), rowTableName(cid)]) {
    const [misplaced] = await db.from(table).whereRaw('ord <> id').count('* as total')
    if (Number(misplaced.total)) throw new Error(`${table}: ${misplaced.total} rows with ord <> id`)
  }
  if (dialect !== 'mysql') await db.rawQuery('ANALYZE')
  else await db.rawQuery(`ANALYZE TABLE ${rowTableName(cid)}, table_cell_history`)

  const viewId = await createWonView(cid, F.status)
  return { cid, companiesCatId, F, viewId, companyIds }
}

/** A saved view with an equality filter (creates its index). */
async function createWonView(cid: number, statusField: number) {
  const { viewId } = await api('createView', {
    catId: cid,
    name: 'Won',
    filterGroup: {
      operator: 'and',
      filters: [
        { field_id: statusField, filter_type: 'text', json: { predicate: 'is', operand: 'won' } },
      ],
    },
  })
  return Number(viewId)
}

/**
 * MariaDB, after the seeding's index build: every indexable column of `catIds` has a ready gram
 * table and its three triggers (throws otherwise); up to 20,000 rows or with
 * BENCH_CHECK_TEXT_INDEX=1, each index is also compared gram by gram with its rows
 * (checkTextIndex, the tests' integrity check: minutes at 100,000 rows).
 */
const CHECK_GRAMS = process.env.BENCH_CHECK_TEXT_INDEX === '1' || ROWS <= 20_000
async function checkTextIndexes(catIds: number[]) {
  const textIndex = await import('#plugins/tables/services/text_index')
  const { builtColumns, gramTableName } = await import('#plugins/tables/services/text_index_mysql')
  for (const catId of catIds) {
    const { fields } = (await metaService.category(catId))!.category
    const columns = fields
      .filter((field) => textIndex.isTextIndexable(field, field.column))
      .map((field) => field.column!)
    const { columns: built } = await builtColumns(catId)
    for (const column of columns) {
      const name = gramTableName(catId, column)
      const [triggers] = await db.rawQuery(
        'SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (?, ?, ?)',
        [`${name}_ai`, `${name}_au`, `${name}_ad`]
      )
      if (!built.has(column) || Number(triggers[0].n) !== 3)
        throw new Error(`${name}: not built (${built.has(column)}) or ${triggers[0].n} triggers`)
      if (CHECK_GRAMS) await textIndex.checkTextIndex(catId, column)
    }
    console.log(
      `table ${catId}: text indexes ready with their triggers on ${columns.join(', ')}` +
        (CHECK_GRAMS ? ' (checked gram by gram against the rows)' : '')
    )
  }
}

/** BENCH_REUSE=1: measures again on the data of a previous run (same DATA_DIR / DB_DATABASE). */
async function reuse() {
  const categories = await db.from('table_categories').whereIn('name', ['Companies', 'Contacts'])
  const companiesId = Number(categories.find((row) => row.name === 'Companies').id)
  const cid = Number(categories.find((row) => row.name === 'Contacts').id)
  const fields = await db.from('table_fields').where('category_id', cid)
  const id = (name: string) => Number(fields.find((row) => row.name === name).id)
  const F = {
    name: id('Name'),
    notes: id('Notes'),
    price: id('Price'),
    qty: id('Qty'),
    day: id('Day'),
    active: id('Active'),
    status: id('Status'),
    email: id('Email'),
    city: id('City'),
    score: id('Score'),
    company: id('Company'),
    companySize: id('Company size'),
  }
  const view = await db.from('table_views').where('category_id', cid).where('name', 'Won').first()
  const companyRows = await db.from(rowTableName(companiesId)).orderBy('id').select('id')
  const companyIds = companyRows.map((row) => Number(row.id))
  const counted = await db.from(rowTableName(cid)).count('* as total').first()
  console.log(`reusing ${Number(counted.total).toLocaleString('en')} rows (BENCH_REUSE)`)
  // A seeding stopped before its end (a long run cut short) left no view: made now.
  if (!view && dialect === 'mysql') await db.rawQuery(`ANALYZE TABLE ${rowTableName(cid)}`)
  const viewId = view ? Number(view.id) : await createWonView(cid, F.status)
  return { cid, companiesCatId: companiesId, F, viewId, companyIds }
}

const { cid, companiesCatId, F, viewId, companyIds } = REUSE ? await reuse() : await seed()

/**
 * MariaDB: the InnoDB buffer pool against the tables measured (README, "MariaDB settings"). A
 * pool smaller than the 1M-row table makes every read past its cached pages a disk read, and
 * each write group evicts what the reads before it had cached: the figures then measure the
 * pool, not the queries.
 */
if (dialect === 'mysql') {
  const [[pool]] = await db.rawQuery('SELECT @@innodb_buffer_pool_size AS size')
  const [sizes] = await db.rawQuery(
    'SELECT TABLE_NAME AS name, DATA_LENGTH + INDEX_LENGTH AS size FROM information_schema.TABLES ' +
      'WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME = ? OR TABLE_NAME LIKE ? OR TABLE_NAME = ?)',
    [rowTableName(cid), `${rowTableName(cid)}\\_%`, 'table_cell_history']
  )
  const mb = (bytes: number) => `${Math.round(bytes / 1048576).toLocaleString('en')} MB`
  const rowTable = Number(sizes.find((row: any) => row.name === rowTableName(cid))?.size ?? 0)
  // The text indexes' gram tables (tt_<catId>_tri_<column>): only the grams a search probes are
  // read, so they are left out of the pool's hot set.
  const isGrams = (row: any) => String(row.name).startsWith(`${rowTableName(cid)}_tri_`)
  const sum = (list: any[]) => list.reduce((total: number, row: any) => total + Number(row.size), 0)
  const all = sum(sizes.filter((row: any) => !isGrams(row)))
  console.log(
    `innodb_buffer_pool_size ${mb(Number(pool.size))}; Contacts' row table ${mb(rowTable)} ` +
      `with its indexes, ${mb(all)} with its side tables and the cell history; its text ` +
      `indexes ${mb(sum(sizes.filter(isGrams)))} (information_schema data_length + index_length)`
  )
  if (Number(pool.size) < all)
    console.warn(
      `WARNING: the buffer pool (${mb(Number(pool.size))}) is smaller than the tables measured ` +
        `(${mb(all)}): reads past it go to disk. See the tables README, "MariaDB settings" ` +
        `(SET GLOBAL innodb_buffer_pool_size = 2147483648).`
    )
}

// ---- measurements --------------------------------------------------------------
/**
 * BENCH_ONLY=reads,bulk,updates,activity,pivot,rollback,reference (comma separated): only those
 * (the default); textindex (the text index's write cost, with and without) and counters (the
 * counts kept by triggers' write cost) run when named.
 * reads = pages (pages, a saved view's page, the counts) + contains (the two text searches).
 */
const groups = (
  process.env.BENCH_ONLY ?? 'reads,bulk,updates,activity,pivot,rollback,reference'
).split(',')
const only = (group: string) => groups.includes(group)
const figures: [string, string, string][] = []
async function timeit(
  label: string,
  target: string,
  runs: number,
  work: (i: number) => Promise<unknown>
) {
  // With BENCH_BEFORE_SERVER, its server is measured too, call for call in alternating order.
  const sides = modes.before ? [clientOn.call, modes.before.call] : [clientOn.call]
  // Warm up: a freshly started server's first calls run before V8 has optimized the path (the
  // first page's p50 over 50 calls after 3 warm-ups was ~3.2 ms at 1M rows; warm, ~1.5 ms).
  for (const side of sides) {
    apiCall = side
    for (let i = 0; i < Math.min(20, runs); i++) await work(i)
  }
  const times = sides.map(() => [] as number[])
  for (let i = 0; i < runs; i++)
    for (let j = 0; j < sides.length; j++) {
      const side = (i + j) % sides.length
      apiCall = sides[side]
      const t0 = performance.now()
      await work(i)
      times[side].push(performance.now() - t0)
    }
  apiCall = clientOn.call
  report(label, target, times[0])
  if (times[1]) report(`${label} [BENCH_BEFORE_SERVER]`, '-', times[1])
}
/** Each timed measure's p50 (ms), for BENCH_FIGURES_JSON. */
const medians: Record<string, number> = {}
/** Records and prints the p50 and p95 of `times` (ms). */
function report(label: string, target: string, times: number[]) {
  times.sort((a, b) => a - b)
  const p50 = times[Math.floor(times.length / 2)]
  const p95 = times[Math.floor(times.length * 0.95)]
  medians[label] = p50
  figures.push([label, `p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms`, target])
  console.log(`${label}: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms (target ${target})`)
}

/**
 * Counts kept by triggers (plugins/tables/services/row_counters.ts): a deep page or a saved
 * view's count past tables.countersMinRows makes its counter in the background, from the
 * rows. The first ask is made and the counter waited for (and timed) before the measure, as a
 * text index is built before its searches; below the setting nothing is made or waited for.
 */
const countersMinRows = Number(process.env.TABLES_COUNTERS_MIN_ROWS ?? 50_000)
async function awaitCounter(
  label: string,
  counter: number,
  rows: number,
  ask: () => Promise<unknown>
) {
  if (countersMinRows <= 0 || rows < countersMinRows) return
  const t0 = performance.now()
  await ask()
  const made = () => db.from('table_counters').where({ category_id: cid, counter }).first()
  while (!(await made())) {
    if (performance.now() - t0 > 600_000) throw new Error(`counter ${counter} not made in 10 min`)
    await new Promise((done) => setTimeout(done, 100))
  }
  console.log(`${label}: counter made in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
}

const historyCount = await db.from('table_cell_history').count('* as total').first()

if (only('reads') || only('pages')) {
  await timeit('getTableValues, 100-row page (offset 0..9,900)', '<= 10 ms', 300, (i) =>
    api('getTableValues', { catId: cid, offset: (i % 100) * 100, maxRows: 100 })
  )
  // Half-way through the table: an offset the row table's primary key skips to (issue 23 item 8).
  const middle = Math.floor(ROWS / 2)
  await awaitCounter('deep pages', 0, middle, () =>
    api('getTableValues', { catId: cid, offset: middle, maxRows: 100 })
  )
  await timeit('getTableValues, 100-row deep page (offset rows / 2)', '<= 10 ms', 20, (i) =>
    api('getTableValues', { catId: cid, offset: middle + (i % 10) * 100, maxRows: 100 })
  )
  await timeit('getTableValues, 100-row page, saved view equality filter', '<= 10 ms', 50, () =>
    api('getTableValues', {
      catId: cid,
      maxRows: 100,
      filterRowIds: { applyViewFilters: String(viewId) },
    })
  )
}
if (only('reads') || only('contains')) {
  await timeit('getTableValues, 100-row page, text contains filter', '<= 150 ms', 20, (i) =>
    api('getTableValues', {
      catId: cid,
      maxRows: 100,
      filterRowIds: {
        applyViewFilters: {
          filterGroup: {
            operator: 'and',
            filters: [
              {
                field_id: String(F.name),
                filter_type: 'text',
                json: { predicate: 'contains', operand: `${words[i % 12]} ${words[(i + 3) % 12]}` },
              },
            ],
          },
        },
      },
    })
  )
  // A pattern a few rows hold (a row's whole name): answered through the text index
  // (services/text_index.ts), where the 'alpha delta' search above (1 row in 144) scans.
  await timeit(
    'getTableValues, 100-row page, selective text contains (a few rows)',
    '<= 20 ms',
    20,
    (i) => {
      const n = (i * 7919 + 13) % ROWS
      return api('getTableValues', {
        catId: cid,
        maxRows: 100,
        filterRowIds: {
          applyViewFilters: {
            filterGroup: {
              operator: 'and',
              filters: [
                {
                  field_id: String(F.name),
                  filter_type: 'text',
                  json: {
                    predicate: 'contains',
                    operand: `${words[n % 12]} ${words[(n >> 4) % 12]} ${n}`,
                  },
                },
              ],
            },
          },
        },
      })
    }
  )
}
if (only('reads') || only('pages')) {
  const viewCount = () =>
    api('computeTableOperation', {
      catId: cid,
      operation: 'count',
      filterRowIds: { applyViewFilters: String(viewId) },
    })
  const viewRows = Number(((await viewCount()) as Record<string, any>).result ?? 0)
  await awaitCounter('saved view count', Number(viewId), viewRows, viewCount)
  await timeit('computeTableOperation count, saved view filter', '<= 200 ms', 20, () =>
    api('computeTableOperation', {
      catId: cid,
      operation: 'count',
      filterRowIds: { applyViewFilters: String(viewId) },
    })
  )
  // An ad hoc filter on a field no index covers (issue 23 item 4): the count scans.
  await timeit(
    'computeTableOperation count, ad hoc filter on an unindexed number',
    '<= 100 ms',
    10,
    (i) =>
      api('computeTableOperation', {
        catId: cid,
        operation: 'count',
        filterRowIds: {
          applyViewFilters: {
            filterGroup: {
              operator: 'and',
              filters: [
                {
                  field_id: String(F.qty),
                  filter_type: 'number',
                  json: { predicate: 'gte', operand: 40 + (i % 10) },
                },
              ],
            },
          },
        },
      })
  )
}

let tmp = 0
/**
 * The bulk writes' table: like Contacts' written fields (a text, a number, an enum, a link with
 * its caption) with rows of its own, so that Contacts keeps BENCH_ROWS rows for every other
 * measure (a run adds ~250,000 rows).
 */
async function bulkTable() {
  const existing = await db.from('table_categories').where('name', 'Bulk writes').first()
  const created = existing
    ? null
    : await api('createTable', {
        b_o: 'bench',
        b_c: 'bench',
        name: 'Bulk writes',
        fields: [
          { name: 'Name', type: 'shorttext' },
          { name: 'Qty', type: 'integer' },
          { name: 'Status', type: 'enum', options: { values: statuses } },
          { name: 'Company', type: 'link', options: { linkCatId: companiesCatId } },
        ],
      })
  const catId = Number(existing?.id ?? created.catId)
  const fields = await db.from('table_fields').where('category_id', catId).orderBy('id')
  const id = (name: string) => Number(fields.find((row) => row.name === name).id)
  return { catId, name: id('Name'), qty: id('Qty'), status: id('Status'), company: id('Company') }
}
/** `requests` createOrUpdateTableRows of `size` new rows each, from `clients` concurrent clients. */
function bulk(
  target: Awaited<ReturnType<typeof bulkTable>>,
  mode: Mode,
  clients: number,
  requests: number,
  size: number
) {
  return measure(mode, requests * size, () =>
    Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let r = client; r < requests; r += clients) {
          const rows: Record<string, Record<string, string>> = {}
          for (let i = 0; i < size; i++)
            rows[`tmp${tmp++}`] = {
              [target.name]: `bulk ${i}`,
              [target.qty]: String(i % 100),
              [target.status]: 'open',
              [target.company]: String(companyIds[i % COMPANIES]),
            }
          await modes[mode]!.call('createOrUpdateTableRows', { catId: target.catId, rows })
        }
      })
    )
  )
}
if (only('bulk')) {
  const target = await bulkTable()
  const ROUNDS = Number(process.env.BENCH_BULK_ROUNDS ?? 3)
  for (const [clients, requests, size] of [
    [1, 2, 10_000],
    [8, 16, 1_000],
  ]) {
    for (const mode of modeList) await bulk(target, mode, clients, Math.min(requests, 2), size) // warm-up
    const rounds = emptyRounds()
    for (let i = 0; i < ROUNDS; i++)
      for (const mode of alternate(i))
        rounds[mode].push(await bulk(target, mode, clients, requests, size))
    const result = compare(rounds, ' rows/s', ' a row')
    const label = `createOrUpdateTableRows, ${clients} client${clients > 1 ? 's' : ''} x ${size.toLocaleString('en')}-row requests`
    figures.push([label, result, '>= 30,000 rows/s'])
    console.log(`${label}: ${result}`)
  }
}

const firstRow = await db.from(rowTableName(cid)).min('id as id').first()
const firstId = Number(firstRow.id)
const UPDATES = Number(process.env.BENCH_UPDATES ?? 3000)
let round = 0
/**
 * updateTableValue rate over HTTP with `writers` concurrent clients (1: sequential), each
 * awaiting its answer before sending its next write, on distinct random rows of the table
 * (a client editing a page writes rows that are not cached).
 */
function updates(mode: Mode, writers: number): Promise<Measured> {
  const fieldId = [F.qty, F.price, F.score][round % 3]
  const salt = 7793 + 1000 * round++
  return measure(mode, UPDATES, () =>
    Promise.all(
      Array.from({ length: writers }, async (_, worker) => {
        for (let i = worker; i < UPDATES; i += writers)
          await modes[mode]!.call('updateTableValue', {
            rowId: String(firstId + ((i * salt) % ROWS)),
            fieldId,
            value: String(i % 100),
          })
      })
    )
  )
}

/**
 * updateTableValue with cell history on and off (issue 21 item 9, issue 23 item 2): the two
 * servers in alternating rounds; medians compared.
 */
if (only('updates')) {
  const ROUNDS = Number(process.env.BENCH_HISTORY_ROUNDS ?? 5)
  for (const writers of WRITERS) {
    for (const mode of modeList) await updates(mode, writers) // warm-up
    const rounds = emptyRounds()
    for (let i = 0; i < ROUNDS; i++)
      for (const mode of alternate(i)) rounds[mode].push(await updates(mode, writers))
    const label = `updateTableValue, ${writers === 1 ? 'sequential' : `${writers} concurrent clients`}`
    const result = compare(rounds, '/s', ' an update')
    figures.push([label, result, '>= 3,000/s; on >= 85 % of off'])
    console.log(`${label}: ${result}`)
  }
}

/** Sequential timed calls over HTTP (one client): p50 and p95 of `runs`, after 3 warm-ups. */

if (only('activity')) {
  // An activity field on Contacts for this measure only (it is on every page read while there).
  const { fieldId } = await api('createField', { catId: cid, name: 'Activity', type: 'activity' })
  try {
    await timeit(
      `getTableValues, 100 rows with an activity field (${Number(historyCount.total).toLocaleString('en')} history entries)`,
      '<= 10 ms',
      50,
      (i) =>
        api('getTableValues', { catId: cid, offset: (i % HISTORY_ROWS_PAGES) * 100, maxRows: 100 })
    )
  } finally {
    await api('deleteField', { fieldId })
  }
}

if (only('pivot')) {
  const pivot = {
    p_field_hz: F.status,
    p_field_vt: F.day,
    dateGrouping: 'month',
    p_field_co: 'count',
  }
  const pivotOf = (call: typeof api) => () => call('getTablePivotValues', { catId: cid, ...pivot })
  // An ad hoc pivot first (no pivot index yet on a fresh run: the rows are sorted to be grouped).
  const unsaved = await db.from('table_categories').where('id', cid).first()
  const prefs = JSON.parse(unsaved.prefs ?? '{}')
  if (prefs.p_field_hz === undefined)
    await timeit(
      'getTablePivotValues, count by Status x month of Day, no pivot index',
      '-',
      5,
      pivotOf(api)
    )
  // Saved as the table's pivot (updateTable prefs), which makes its pivot index (README, "Pivot index").
  const t0 = performance.now()
  await api('updateTable', { catId: cid, prefs: JSON.stringify({ ...prefs, ...pivot }) })
  console.log(
    `pivot settings saved, pivot index made in ${((performance.now() - t0) / 1000).toFixed(1)} s`
  )
  // MariaDB: the pages read from disk meanwhile (a server-wide figure: other clients' reads
  // count too), to tell a pool too small for the table from a slow query.
  const diskReads = async () => {
    if (dialect !== 'mysql') return 0
    const [rows] = await db.rawQuery("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'")
    return Number(rows[0]?.Value ?? 0)
  }
  const reads0 = await diskReads()
  const pivotTimes: number[] = []
  await timeit('getTablePivotValues, count by Status x month of Day', '<= 300 ms', 10, async () => {
    const start = performance.now()
    await pivotOf(api)()
    pivotTimes.push(performance.now() - start)
  })
  console.log(
    `  fastest pivot ${Math.min(...pivotTimes.slice(3)).toFixed(2)} ms` +
      (dialect === 'mysql'
        ? `; InnoDB pages read from disk meanwhile: ${(await diskReads()) - reads0}`
        : '')
  )
  if (modes.before)
    await timeit(
      'getTablePivotValues, same, BENCH_BEFORE_SERVER',
      '-',
      10,
      pivotOf(modes.before.call)
    )
}

if (only('rollback')) {
  // Each run: a 1,000-row bulk change of rows past the seeded history's, then its rollback (timed).
  const BULK = Math.min(1000, Math.floor(ROWS / 2))
  const lowest = Math.min(ROWS - BULK, HISTORY_ROWS)
  let from = lowest
  const times: number[] = []
  for (let i = 0; i < 6; i++) {
    const rows: Record<string, Record<string, string>> = {}
    for (let r = 0; r < BULK; r++) rows[String(firstId + from + r)] = { [F.qty]: String(1000 + i) }
    await api('createOrUpdateTableRows', { catId: cid, rows })
    const { changes } = await api('getRowHistory', { rowId: firstId + from, nbMax: 1 })
    const t0 = performance.now()
    const { rowIds } = await api('rollBackBeforeChange', {
      rowId: firstId + from,
      changeId: changes[0].id,
      scope: 'change',
    })
    if (i > 0) times.push(performance.now() - t0) // the first is a warm-up
    if (rowIds.length !== BULK) throw new Error(`rolled back ${rowIds.length} rows, not ${BULK}`)
    from = from + 2 * BULK > ROWS ? lowest : from + BULK
  }
  report(`rollBackBeforeChange scope=change of a ${BULK}-row bulk change`, '<= 1 s', times)
}

if (only('reference')) {
  // A link field of Companies into Contacts: getReferenceFieldValues searches Contacts' names.
  const { fieldId } = await api('createField', {
    catId: companiesCatId,
    name: 'Contact',
    type: 'link',
    options: { linkCatId: cid },
  })
  try {
    await timeit(
      'getReferenceFieldValues, search of a common word (first 100)',
      '<= 50 ms',
      20,
      (i) => api('getReferenceFieldValues', { fieldId, search_string: words[i % 12], maxRows: 100 })
    )
    // 'kilo alpha 10' and the like: 1 to ~600 rows of 1M (a name's words and its number's start).
    await timeit('getReferenceFieldValues, selective search (1-600 rows)', '<= 50 ms', 10, (i) =>
      api('getReferenceFieldValues', {
        fieldId,
        search_string: `${words[(i * 5) % 12]} ${words[((i * 5) >> 4) % 12]} ${i * 5}`,
        maxRows: 100,
      })
    )
  } finally {
    await api('deleteField', { fieldId })
  }
}

/**
 * BENCH_ONLY=textindex: the text index's write cost. The bulk writes' table (its Name is a text
 * field, so indexed) in alternating rounds with its index built and dropped
 * (services/text_index.ts), on the history-on server: createOrUpdateTableRows 8 x 1,000 new rows
 * and updateTableValue of Name on existing rows (8 clients), each with rate and server CPU.
 */
if (only('textindex')) {
  const { createTextIndex, dropTextIndexes } = await import('#plugins/tables/services/text_index')
  const target = await bulkTable()
  const counted = await db.from(rowTableName(target.catId)).count('* as n').first()
  if (Number(counted.n) < 1000) await bulk(target, 'on', 1, 1, 1000)
  const nameField = await db.from('table_fields').where('id', target.name).first()
  const firstRows = await db.from(rowTableName(target.catId)).orderBy('id').limit(5000).select('id')
  const rowIds = firstRows.map((row) => Number(row.id))
  const NAME_UPDATES = Number(process.env.BENCH_UPDATES ?? 3000)
  const renames = (salt: number) =>
    measure('on', NAME_UPDATES, () =>
      Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (let i = worker; i < NAME_UPDATES; i += 8)
            await api('updateTableValue', {
              rowId: String(rowIds[(i * salt) % rowIds.length]),
              fieldId: target.name,
              value: `renamed ${salt} ${i}`,
            })
        })
      )
    )
  const results = {
    with: { bulk: [] as Measured[], updates: [] as Measured[] },
    without: { bulk: [] as Measured[], updates: [] as Measured[] },
  }
  for (let i = 0; i < 6; i++) {
    // on, off, off, on, on, off: each state sees the table's growth alike.
    const indexed = [0, 3, 4].includes(i)
    if (indexed) await createTextIndex(target.catId, nameField.column_name)
    else await dropTextIndexes(target.catId)
    const into = results[indexed ? 'with' : 'without']
    into.bulk.push(await bulk(target, 'on', 8, 8, 1000))
    into.updates.push(await renames(7793 + 1000 * i))
  }
  await createTextIndex(target.catId, nameField.column_name)
  const line = (list: Measured[], unit: string) =>
    `${median(list.map((m) => m.rate)).toFixed(0)}${unit} (CPU ${median(list.map((m) => m.cpu)).toFixed(3)} ms)`
  for (const [label, key, unit] of [
    ['createOrUpdateTableRows 8 x 1,000 rows, text index with / without', 'bulk', ' rows/s'],
    ['updateTableValue of an indexed text, 8 clients, with / without', 'updates', '/s'],
  ] as const) {
    const result = `${line(results.with[key], unit)} / ${line(results.without[key], unit)}`
    figures.push([label, result, 'reported'])
    console.log(`${label}: ${result}`)
  }
}

/**
 * BENCH_ONLY=counters: the write cost of counts kept by triggers (services/row_counters.ts).
 * The bulk table with counter 0 (every row) and a saved view's ("Status is open", which every
 * bulk row enters) made, against none, in alternating rounds: bulk inserts, and
 * updateTableValue of Status flipping rows in and out of the view (the triggers' worst case).
 */
if (only('counters')) {
  const counters = await import('#plugins/tables/services/row_counters')
  const target = await bulkTable()
  const counted = await db.from(rowTableName(target.catId)).count('* as n').first()
  if (Number(counted.n) < 5000) await bulk(target, 'on', 1, 1, 5000)
  const openGroup = {
    operator: 'and',
    filters: [
      { field_id: target.status, filter_type: 'text', json: { predicate: 'is', operand: 'open' } },
    ],
  }
  const { viewId: openView } = await api('createView', {
    catId: target.catId,
    name: `Open ${Date.now()}`,
    filterGroup: JSON.stringify(openGroup),
  })
  const firstRows = await db.from(rowTableName(target.catId)).orderBy('id').limit(5000).select('id')
  const rowIds = firstRows.map((row) => Number(row.id))
  const STATUS_UPDATES = Number(process.env.BENCH_UPDATES ?? 3000)
  const flips = (salt: number) =>
    measure('on', STATUS_UPDATES, () =>
      Promise.all(
        Array.from({ length: 8 }, async (_, worker) => {
          for (let i = worker; i < STATUS_UPDATES; i += 8)
            await api('updateTableValue', {
              rowId: String(rowIds[(i * salt) % rowIds.length]),
              fieldId: target.status,
              value: (i + salt) % 2 ? 'open' : 'won',
            })
        })
      )
    )
  const specs = [
    { counter: counters.ALL_ROWS, group: null },
    { counter: Number(openView), group: openGroup as any },
  ]
  const make = async () => {
    const { category } = (await metaService.category(target.catId))!
    for (const spec of specs) {
      const group =
        spec.group && category.views.find((view) => view.id === spec.counter)!.filterGroup
      counters.noteCount(category.fields, target.catId, { ...spec, group }, Number.MAX_SAFE_INTEGER)
      while (
        !(await db
          .from('table_counters')
          .where({ category_id: target.catId, counter: spec.counter })
          .first())
      )
        await new Promise((done) => setTimeout(done, 50))
    }
  }
  const drop = async () => {
    for (const spec of specs) await counters.dropCounter(target.catId, spec.counter)
  }
  const results = {
    with: { bulk: [] as Measured[], updates: [] as Measured[] },
    without: { bulk: [] as Measured[], updates: [] as Measured[] },
  }
  for (let i = 0; i < 6; i++) {
    // with, without, without, with, with, without: each state sees the table's growth alike.
    const kept = [0, 3, 4].includes(i)
    if (kept) await make()
    else await drop()
    const into = results[kept ? 'with' : 'without']
    into.bulk.push(await bulk(target, 'on', 8, 8, 1000))
    into.updates.push(await flips(7793 + 1000 * i))
  }
  await drop()
  const line = (list: Measured[], unit: string) =>
    `${median(list.map((m) => m.rate)).toFixed(0)}${unit} (CPU ${median(list.map((m) => m.cpu)).toFixed(3)} ms)`
  for (const [label, key, unit] of [
    ['createOrUpdateTableRows 8 x 1,000 rows, 2 counters / none', 'bulk', ' rows/s'],
    [
      'updateTableValue in and out of a counted view, 8 clients, 2 counters / none',
      'updates',
      '/s',
    ],
  ] as const) {
    const result = `${line(results.with[key], unit)} / ${line(results.without[key], unit)}`
    figures.push([label, result, 'reported'])
    console.log(`${label}: ${result}`)
  }
}

clientOn.close()
clientOff.close()
clientBefore?.close()
await serverOn.stop()
await serverOff.stop()
await serverBefore?.stop()

console.log(
  `\n| measure (${dialect}, ${ROWS.toLocaleString('en')} rows) | result | target |\n|---|---|---|`
)
for (const [label, result, target] of figures) console.log(`| ${label} | ${result} | ${target} |`)
// bench:growth reads each size's medians from here.
if (process.env.BENCH_FIGURES_JSON)
  writeFileSync(process.env.BENCH_FIGURES_JSON, JSON.stringify({ dialect, rows: ROWS, medians }))
await app.terminate()
