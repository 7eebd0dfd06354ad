import { readQuery } from '#core/native_sql'
import { chunks } from '../lib/row_sql.js'

/** Users by code as comments, activity cells and history show them: display name and the user's stamp. */
export type UsersByCode = Record<string, { n: string; s: number }>

/** Display name ('First Last', else the code) and stamp of users by code, 500 codes a query. */
export async function usersByCode(codes: Iterable<string>): Promise<UsersByCode> {
  const users: UsersByCode = {}
  for (const part of chunks([...new Set(codes)], 500)) {
    const rows = await readQuery(
      `SELECT code, first_name, last_name, sstamp FROM users WHERE code IN (${part.map(() => '?').join(', ')})`,
      part
    )
    for (const row of rows)
      users[row.code] = {
        n: `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim() || row.code,
        s: Number(row.sstamp),
      }
  }
  return users
}

/** Display names of users by code, for pivots and smart texts. */
export async function userNamesOf(codes: Iterable<string>): Promise<Map<string, string>> {
  const users = await usersByCode(codes)
  return new Map(Object.entries(users).map(([code, user]) => [code, user.n]))
}
