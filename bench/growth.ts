/**
 * bench:growth — how the cost of reads grows with a table's size (issue 23 item 8): runs
 * bench:tables' reads group (BENCH_ONLY=reads) once per size, each on a database of its own, and
 * prints one table of p50s over HTTP: first page (with its link and lookup columns), deep page
 * (offset rows / 2), a selective text contains, a saved view's count and an ad hoc count on an
 * unindexed field, per size, and the factor from the smallest size to the largest. A measure
 * that stays flat (or grows like log n) is served by an index; one that grows with n scans.
 *
 *   npm run bench:growth                                   # SQLite: 10k, 100k, 1M rows
 *   BENCH_SIZES=10000,100000 npm run bench:growth          # quicker (about two minutes)
 *   DB_CONNECTION=mysql BENCH_SIZES=10000,100000,1000000,10000000 npm run bench:growth
 *   BENCH_REUSE=1 npm run bench:growth                     # reuse the sizes seeded before
 *
 * Each size seeds into tmp/bench-growth-<rows> (SQLite) or the database quire_bench_growth_<rows>
 * (MariaDB, created when missing); BENCH_HISTORY defaults to 10,000 entries (the reads do not
 * depend on it). Other settings are bench:tables' (BENCH_BUILD_DIR, BENCH_NODE_OPTIONS, ...).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './lib/quire_process.js'

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000,1000000').split(',').map(Number)
const mysql = process.env.DB_CONNECTION === 'mysql'

/** The measures of the table, by bench:tables' labels. */
const MEASURES: [string, string][] = [
  ['first page', 'getTableValues, 100-row page (offset 0..9,900)'],
  ['deep page', 'getTableValues, 100-row deep page (offset rows / 2)'],
  ['selective contains', 'getTableValues, 100-row page, selective text contains (a few rows)'],
  ['saved view count', 'computeTableOperation count, saved view filter'],
  ['ad hoc count', 'computeTableOperation count, ad hoc filter on an unindexed number'],
]

const mysqlClient = (sql: string) =>
  execFileSync('mysql', [
    `-h${process.env.DB_HOST ?? '127.0.0.1'}`,
    `-u${process.env.DB_USER ?? 'root'}`,
    ...(process.env.DB_PASSWORD ? [`-p${process.env.DB_PASSWORD}`] : []),
    '-N',
    '-e',
    sql,
  ]).toString()

/** Whether a previous run seeded this size (BENCH_REUSE=1 then measures it again). */
function seeded(rows: number, database: string) {
  if (!mysql) return existsSync(join(ROOT, 'tmp', `bench-growth-${rows}`, 'quire.sqlite'))
  return mysqlClient(`SHOW TABLES IN ${database} LIKE 'table_categories'`).trim() !== ''
}

const results: { rows: number; medians: Record<string, number> }[] = []
for (const rows of SIZES) {
  const figuresFile = join(ROOT, 'tmp', `bench-growth-${rows}.json`)
  mkdirSync(join(ROOT, 'tmp'), { recursive: true })
  const database = `quire_bench_growth_${rows}`
  if (mysql) mysqlClient(`CREATE DATABASE IF NOT EXISTS ${database}`)
  const reuse = process.env.BENCH_REUSE === '1' && seeded(rows, database)
  console.log(`\n=== ${rows.toLocaleString('en')} rows ===`)
  execFileSync(process.execPath, ['--import=ts-node-maintained/register/esm', 'bench/tables.ts'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: {
      ...process.env,
      BENCH_ROWS: String(rows),
      BENCH_HISTORY: process.env.BENCH_HISTORY ?? '10000',
      BENCH_ONLY: 'reads',
      BENCH_FIGURES_JSON: figuresFile,
      BENCH_REUSE: reuse ? '1' : '0',
      ...(mysql ? { DB_DATABASE: database } : { DATA_DIR: join('tmp', `bench-growth-${rows}`) }),
    },
  })
  results.push(JSON.parse(readFileSync(figuresFile, 'utf8')))
}

const ms = (value: number | undefined) => (value === undefined ? 'n/a' : value.toFixed(2))
const first = results[0]
const last = results[results.length - 1]
console.log(
  `\np50 over HTTP, ms (${mysql ? 'MariaDB' : 'SQLite'}; ${first.rows.toLocaleString('en')} to ` +
    `${last.rows.toLocaleString('en')} rows is ×${last.rows / first.rows})\n`
)
console.log(
  `| measure | ${results.map((r) => `${r.rows.toLocaleString('en')} rows`).join(' | ')} | growth |`
)
console.log(`|---|${results.map(() => '---|').join('')}---|`)
for (const [name, label] of MEASURES) {
  const growth =
    first.medians[label] && last.medians[label]
      ? `×${(last.medians[label] / first.medians[label]).toFixed(1)}`
      : 'n/a'
  console.log(`| ${name} | ${results.map((r) => ms(r.medians[label])).join(' | ')} | ${growth} |`)
}
