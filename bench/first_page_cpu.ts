/**
 * Server CPU per first-page read (getTableValues, 100 rows, offsets 0..9,900) and per ad hoc
 * count, against compiled builds on data bench:tables seeded (BENCH_REUSE data): CPU time is what
 * a loaded shared machine changes least. Builds given as arguments are measured in alternating
 * rounds (before/after in the same run).
 *
 *   DATA_DIR=tmp/x node --import=ts-node-maintained/register/esm bench/first_page_cpu.ts \
 *     tmp/before/bin/server.js tmp/after/bin/server.js
 */
import { resolve } from 'node:path'
import { apiClient } from './lib/api_client.js'
import { benchEnv, signIn, startQuire } from './lib/quire_process.js'

const builds = process.argv.slice(2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CALLS = Number(process.env.BENCH_CALLS ?? 500)
const env = benchEnv({ DATA_DIR: resolve(process.env.DATA_DIR ?? 'tmp/bench-tables') })
const servers = []
for (const build of builds) servers.push(await startQuire(env, { compiled: resolve(build) }))
const session = await signIn(servers[0].url, 'bench@example.test', 'bench-password')
const clients = servers.map((server) => apiClient(server.url, session, 1).call)
/** The Contacts table (the second bench:tables creates) and its Qty field. */
const catId = Number(process.env.BENCH_CAT ?? 2)
const results = builds.map(() => ({ page: [] as number[], count: [] as number[] }))
for (let round = 0; round < ROUNDS; round++)
  for (const [i, server] of servers.entries()) {
    const call = clients[i]
    for (let w = 0; w < 20; w++) await call('getTableValues', { catId, offset: 0, maxRows: 100 })
    let cpu0 = server.cpuMs()
    for (let n = 0; n < CALLS; n++)
      await call('getTableValues', { catId, offset: (n % 100) * 100, maxRows: 100 })
    results[i].page.push((server.cpuMs() - cpu0) / CALLS)
    cpu0 = server.cpuMs()
    for (let n = 0; n < 20; n++)
      await call('computeTableOperation', {
        catId,
        operation: 'count',
        filterRowIds: {
          applyViewFilters: {
            filterGroup: {
              operator: 'and',
              filters: [
                {
                  field_id: process.env.BENCH_QTY_FIELD ?? '6',
                  filter_type: 'number',
                  json: { predicate: 'gte', operand: 40 + (n % 10) },
                },
              ],
            },
          },
        },
      })
    results[i].count.push((server.cpuMs() - cpu0) / 20)
  }
const median = (values: number[]) => values.slice().sort((a, b) => a - b)[values.length >> 1]
for (const [i, build] of builds.entries())
  console.log(
    `${build}: server CPU per first page ${median(results[i].page).toFixed(3)} ms ` +
      `(rounds ${results[i].page.map((v) => v.toFixed(3)).join(', ')}); per ad hoc count ` +
      `${median(results[i].count).toFixed(2)} ms (rounds ${results[i].count.map((v) => v.toFixed(2)).join(', ')})`
  )
for (const server of servers) await server.stop()
process.exit(0)
