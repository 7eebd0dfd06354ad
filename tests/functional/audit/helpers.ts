import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { AuditLog } from '#core/audit/audit_log'

export const audit = await app.container.make(AuditLog)

/** The raw rows recorded about one target (type + id), oldest first. */
export async function entriesOn(type: string, id: number | string) {
  const rows = await db
    .from('audit_log')
    .where('target_type', type)
    .where('target_id', String(id))
    .orderBy('id')
  return rows.map((row) => ({
    kind: String(row.kind),
    actorId: row.actor_id === null ? null : Number(row.actor_id),
    actorCode: String(row.actor_code),
    address: String(row.address),
    label: String(row.target_label),
    changes: JSON.parse(row.changes),
    raw: JSON.stringify(row),
  }))
}

/** The entries of one kind about a target (the last one first). */
export async function lastOf(type: string, id: number | string, kind: string) {
  const rows = await entriesOn(type, id)
  return rows.filter((row) => row.kind === kind).reverse()
}

/** Addresses the test server sees for the tests' own requests (loopback). */
export const LOOPBACK = /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/
