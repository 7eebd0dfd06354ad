import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { rpcError } from '#core/rpc/errors'
import type { MetaService } from './meta_service.js'

/**
 * What the structure services (tables, fields, views, tabs) share: every structure change
 * bumps its table's metadata version, and they read their counts and ids alike.
 */

export const unix = () => Math.floor(Date.now() / 1000)

export const invalid = (message: string) => rpcError('INVALID_PARAMETER', message)

/** An integer setting (`name` says which in the nok). */
export function intParam(value: unknown, name: string) {
  const number = Number(String(value).trim())
  if (!Number.isInteger(number)) throw invalid(`Invalid parameter ${name}: not an integer`)
  return number
}

/** How many rows of `table` have `column` = `id`. */
export async function countOf(
  trx: TransactionClientContract,
  table: string,
  column: string,
  id: number
) {
  const found = await trx.from(table).where(column, id).count('* as total').first()
  return Number(found?.total ?? 0)
}

/**
 * Marks a table's structure changed in the write's transaction: readers revalidate their cached
 * metadata by `meta_version` (MetaService), and this process drops its copy at once.
 */
export async function bumpMetaVersion(
  trx: TransactionClientContract,
  meta: MetaService,
  categoryId: number,
  stamp: number
) {
  await trx
    .from('table_categories')
    .where('id', categoryId)
    .update({ meta_version: stamp, sstamp: stamp, updated_at: unix() })
  meta.invalidate(categoryId)
}
