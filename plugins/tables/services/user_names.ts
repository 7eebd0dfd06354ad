import db from '@adonisjs/lucid/services/db'
import { chunks } from '../lib/row_sql.js'

/** Display names ('First Last', else the code) of users by code, for pivots and smart texts. */
export async function userNamesOf(codes: Iterable<string>): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  for (const part of chunks([...new Set(codes)], 500)) {
    const users = await db
      .from('users')
      .whereIn('code', part)
      .select('code', 'first_name', 'last_name')
    for (const user of users) {
      const name = `${user.first_name ?? ''} ${user.last_name ?? ''}`.trim()
      names.set(String(user.code), name || String(user.code))
    }
  }
  return names
}
