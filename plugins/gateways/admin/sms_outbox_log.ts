import db from '@adonisjs/lucid/services/db'
import { readPage, whereContains, type PageRequest } from '#core/paging'

const OUTBOX = 'gateways_sms_outbox'
const GATEWAYS = 'gateways_sms'

/** The SMS outbox's states (SmsOutboxService), in their order. */
export const SMS_STATES = ['queued', 'leased', 'sent', 'delivered', 'failed'] as const

/** A gateways_sms_outbox row as the console shows it. */
function smsView(row: any) {
  return {
    id: Number(row.id),
    gatewayId: row.gateway_id === null ? null : Number(row.gateway_id),
    gateway: (row.gateway_phone as string | null) ?? null,
    to: row.phone as string,
    kind: row.kind as string,
    text: String(row.text ?? '').slice(0, 160),
    state: row.state as string,
    attempts: Number(row.attempts),
    notBefore: Number(row.not_before),
    reason: (row.reason as string | null) ?? null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  }
}

/**
 * Read-only views of the SMS outbox (SmsOutboxService's table) for the
 * console: every SMS by state, and one gateway's queue and latest SMS.
 */
export class SmsOutboxLog {
  private base() {
    return db.from(`${OUTBOX} as o`).leftJoin(`${GATEWAYS} as g`, 'g.id', 'o.gateway_id')
  }

  /** Newest first; searched by recipient or gateway number. */
  list(request: PageRequest & { state?: string }) {
    const query = this.base()
    if (request.state) query.where('o.state', request.state)
    whereContains(query, request.search, ['o.phone', 'g.phone'])
    return readPage(
      query,
      request,
      (page) => page.orderBy('o.id', 'desc').select('o.*', 'g.phone as gateway_phone'),
      smsView
    )
  }

  /** SMS in each state, of one gateway or of all. */
  async counts(gatewayId?: number): Promise<Record<string, number>> {
    const query = db.from(OUTBOX).groupBy('state').select('state').count('* as total')
    if (gatewayId !== undefined) query.where('gateway_id', gatewayId)
    const counts: Record<string, number> = Object.fromEntries(SMS_STATES.map((state) => [state, 0]))
    for (const row of await query) counts[row.state] = Number(row.total)
    return counts
  }

  /** A gateway's latest SMS, newest first. */
  async latestOf(gatewayId: number, limit = 10) {
    const rows = await this.base()
      .where('o.gateway_id', gatewayId)
      .orderBy('o.id', 'desc')
      .limit(limit)
      .select('o.*', 'g.phone as gateway_phone')
    return rows.map(smsView)
  }
}
