/**
 * bench:tables — seeds a 1,000,000-row smart table (12 fields, including a
 * link and a lookup into a 10,000-row table) and measures the reads and
 * writes of issue 5 through the tables plugin's services (no HTTP).
 *
 *   npm run bench:tables                       # SQLite in tmp/bench-tables
 *   DB_CONNECTION=mysql DB_DATABASE=quire_bench npm run bench:tables
 *   BENCH_ROWS=100000 npm run bench:tables     # a smaller run
 *   BENCH_REUSE=1 npm run bench:tables         # measure again on the previous run's data
 *   BENCH_ONLY=history BENCH_ROWS=20000 npm run bench:tables   # cell history's cost on updateTableValue
 *
 * The database is migrated fresh (migration:fresh) before seeding, unless BENCH_REUSE=1
 * (each measurement run adds 30,000 rows through createOrUpdateTableRows).
 */
import 'reflect-metadata'
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { Ignitor } from '@adonisjs/core'
import cliProgress from 'cli-progress'

const APP_ROOT = new URL('../', import.meta.url)
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 10_000)
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

const ignitor = new Ignitor(APP_ROOT, {
  importer: (filePath: string) =>
    filePath.startsWith('./') || filePath.startsWith('../')
      ? import(new URL(filePath, APP_ROOT).href)
      : import(filePath),
})
const app = ignitor.createApp('console')
app.booting(async () => {
  await import('#start/env')
})
await app.init()
await app.boot()

const { default: db } = await import('@adonisjs/lucid/services/db')
const { UserService } = await import('#core/services/user_service')
const { StampService } = await import('#core/services/stamp_service')
const users = await app.container.make(UserService)
const stamps = await app.container.make(StampService)
const { NO_RESTRICTIONS } = await import('#models/api_session')
const { StructureService } = await import('#plugins/tables/services/structure_service')
const { FieldStructure } = await import('#plugins/tables/services/field_structure')
const { ViewStructure } = await import('#plugins/tables/services/view_structure')
const { RowsService } = await import('#plugins/tables/services/rows_service')
const { RowWriter } = await import('#plugins/tables/services/row_writer')
const { ValuesService } = await import('#plugins/tables/services/values_service')
const { RowSelection } = await import('#plugins/tables/services/row_selection')
const { TableAccess } = await import('#plugins/tables/services/table_access')
const { MetaService } = await import('#plugins/tables/services/meta_service')
const structureService = await app.container.make(StructureService)
const fieldStructure = await app.container.make(FieldStructure)
const viewStructure = await app.container.make(ViewStructure)
const rowsService = await app.container.make(RowsService)
const rowWriter = await app.container.make(RowWriter)
const valuesService = await app.container.make(ValuesService)
const rowSelection = await app.container.make(RowSelection)
const tableAccess = await app.container.make(TableAccess)
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

/** Migrates fresh and seeds the fixture (a user, a book, Companies and Contacts, a saved view). */
async function seed() {
  // ---- fixture: a user, a book -------------------------------------------------
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
  const book = {
    id: Number(bookId),
    b_o: user.code,
    b_c: 'bench',
    ownerId: user.id,
    archived: false,
  }
  const actor = {
    user,
    principal: user,
    session: null as any,
    restrictions: NO_RESTRICTIONS,
    onBehalf: false,
  }

  // ---- structure ---------------------------------------------------------------
  const companies = await structureService.createTable(actor, book, {
    name: 'Companies',
    fields: [
      { name: 'Name', type: 'shorttext' },
      { name: 'Size', type: 'integer' },
    ],
  })
  const main = await structureService.createTable(actor, book, { name: 'Contacts' })
  const cid = main.categoryId
  const companyFields = (await metaService.category(companies.categoryId))!.category.fields
  const add = (name: string, type: string, options: Record<string, unknown> = {}) =>
    fieldStructure.createField(actor, cid, { name, type, options })
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
    company: await add('Company', 'link', { linkCatId: companies.categoryId }),
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
    { format: 'seeding {table} [{bar}] {percentage}% | {value}/{total} rows | {duration}s' },
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
          ord: ordOf(rowTableName(companies.categoryId), i),
          sstamp: stamp,
          created_at: at,
          updated_at: at,
          created_by: user.code,
          updated_by: user.code,
          [companyFields[0].column!]: `Company ${n}`,
          [companyFields[1].column!]: (n * 37) % 5000,
        }
      })
      const ids = await insertRows(trx, rowTableName(companies.categoryId), rows)
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
  for (const table of [rowTableName(companies.categoryId), rowTableName(cid)]) {
    const [misplaced] = await db.from(table).whereRaw('ord <> id').count('* as total')
    if (Number(misplaced.total)) throw new Error(`${table}: ${misplaced.total} rows with ord <> id`)
  }
  if (dialect !== 'mysql') await db.rawQuery('ANALYZE')
  else await db.rawQuery(`ANALYZE TABLE ${rowTableName(cid)}`)

  // A saved view with an equality filter (creates its index).
  const viewId = await viewStructure.createView(actor, cid, {
    name: 'Won',
    filterGroup: {
      operator: 'and',
      filters: [
        { field_id: F.status, filter_type: 'text', json: { predicate: 'is', operand: 'won' } },
      ],
    },
  })
  return { actor, cid, F, viewId, companyIds }
}

/** BENCH_REUSE=1: measures again on the data of a previous run (same DATA_DIR / DB_DATABASE). */
async function reuse() {
  const { default: User } = await import('#models/user')
  const user = await User.findByOrFail('code', 'bench')
  const actor = {
    user,
    principal: user,
    session: null as any,
    restrictions: NO_RESTRICTIONS,
    onBehalf: false,
  }
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
  return { actor, cid, F, viewId: Number(view.id), companyIds }
}

const { actor, cid, F, viewId, companyIds } = REUSE ? await reuse() : await seed()

// ---- measurements --------------------------------------------------------------
/** BENCH_ONLY=reads,bulk,updates,history (comma separated) runs only those groups. */
const groups = (process.env.BENCH_ONLY ?? 'reads,bulk,updates,history').split(',')
const only = (group: string) => groups.includes(group)
const figures: [string, string, string][] = []
async function timeit(
  label: string,
  target: string,
  runs: number,
  work: (i: number) => Promise<unknown>
) {
  for (let i = 0; i < 3; i++) await work(i) // warm up
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await work(i)
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  const p50 = times[Math.floor(times.length / 2)]
  const p95 = times[Math.floor(times.length * 0.95)]
  figures.push([label, `p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms`, target])
  console.log(`${label}: p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms (target ${target})`)
}

const scope = () => tableAccess.forCategory(actor, cid, 'read')
if (only('reads')) {
  await timeit('100-row page (offset 0..9,900)', '<= 10 ms', 50, async (i) =>
    valuesService.page(actor, await scope(), { offset: (i % 100) * 100, maxRows: 100 })
  )
  await timeit('100-row page, saved view equality filter', '<= 10 ms', 50, async () =>
    valuesService.page(actor, await scope(), {
      maxRows: 100,
      filterRowIds: { applyViewFilters: String(viewId) },
    })
  )
  await timeit('100-row page, text contains filter', '<= 150 ms', 20, async (i) =>
    valuesService.page(actor, await scope(), {
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
  await timeit('100-row page, link + lookup columns only', '<= 15 ms', 50, async (i) =>
    valuesService.page(actor, await scope(), {
      offset: (i % 100) * 100,
      maxRows: 100,
      fieldIds: [F.name, F.company, F.companySize],
    })
  )
  await timeit('count with the saved view filter', '<= 200 ms', 20, async () => {
    const s = await scope()
    return rowSelection.count(
      s.category,
      await rowSelection.selection(s, actor, { applyViewFilters: String(viewId) })
    )
  })
}

let tmp = 0
if (only('bulk'))
  await timeit(
    'createOrUpdateTableRows, 10,000 new rows (with link + lookup)',
    '<= 3 s',
    3,
    async () => {
      const writes = Array.from({ length: 10_000 }, (_, i) => ({
        key: `tmp${tmp++}`,
        values: {
          [F.name]: `bulk ${i}`,
          [F.qty]: String(i % 100),
          [F.status]: 'open',
          [F.company]: String(companyIds[i % COMPANIES]),
        },
      }))
      return rowsService.write(actor, writes, { categoryId: cid })
    }
  )

const firstRow = await db.from(rowTableName(cid)).min('id as id').first()
const firstId = Number(firstRow.id)
const UPDATES = Number(process.env.BENCH_UPDATES ?? 2000)
let round = 0
/**
 * updateTableValue rate with `writers` concurrent clients (1: sequential),
 * each awaiting its answer before sending its next write, on distinct random
 * rows of the 1M (a client editing a page writes rows that are not cached).
 */
async function updates(writers: number, record = true): Promise<number> {
  const fieldId = [F.qty, F.price, F.score][round % 3]
  const salt = 7793 + 1000 * round++
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async (_, worker) => {
      for (let i = worker; i < UPDATES; i += writers) {
        await rowsService.updateValue(actor, {
          rowId: String(firstId + ((i * salt) % ROWS)),
          fieldId,
          value: String(i % 100),
        })
      }
    })
  )
  const rate = UPDATES / ((performance.now() - t0) / 1000)
  const label = writers === 1 ? 'sequential' : `${writers} concurrent writers`
  if (!record) return rate
  figures.push([`updateTableValue, ${label}`, `${rate.toFixed(0)}/s`, '>= 1,000/s'])
  console.log(`updateTableValue ${label}: ${rate.toFixed(0)}/s`)
  return rate
}
if (only('updates')) {
  await updates(1, false) // warm-up
  for (const writers of (process.env.BENCH_WRITERS ?? '1,8,16').split(',').map(Number))
    await updates(writers)
}

/**
 * Cell history's cost (issue 21 item 9): updateTableValue with history on and
 * off (TABLES_HISTORY toggled in this process), in alternating rounds so that
 * both see the same load; the median rate of each is compared.
 */
if (only('history')) {
  const { default: env } = await import('#start/env')
  const initial = env.get('TABLES_HISTORY', true)
  const ROUNDS = Number(process.env.BENCH_HISTORY_ROUNDS ?? 5)
  for (const writers of (process.env.BENCH_WRITERS ?? '1,8').split(',').map(Number)) {
    const rates: Record<'on' | 'off', number[]> = { on: [], off: [] }
    await updates(writers, false) // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      for (const mode of i % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        env.set('TABLES_HISTORY', mode === 'on')
        rates[mode].push(await updates(writers, false))
      }
    }
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]
    const on = median(rates.on)
    const off = median(rates.off)
    const label = writers === 1 ? 'sequential' : `${writers} concurrent writers`
    const result = `${on.toFixed(0)}/s on, ${off.toFixed(0)}/s off (${((on / off) * 100).toFixed(0)} %)`
    figures.push([`updateTableValue with history, ${label}`, result, 'on >= 85 % of off'])
    console.log(`updateTableValue history ${label}: ${result}`)
  }
  env.set('TABLES_HISTORY', initial)
}

console.log(
  `\n| measure (${dialect}, ${ROWS.toLocaleString('en')} rows) | result | target |\n|---|---|---|`
)
for (const [label, result, target] of figures) console.log(`| ${label} | ${result} | ${target} |`)
await app.terminate()
