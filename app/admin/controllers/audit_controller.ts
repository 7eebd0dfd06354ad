import { Readable } from 'node:stream'
import type { HttpContext } from '@adonisjs/core/http'
import { inject } from '@adonisjs/core'
import vine from '@vinejs/vine'
import {
  AUDIT_KINDS,
  AuditLog,
  describeChangesPlainly,
  type AuditFilter,
  type AuditRecord,
} from '#core/audit/audit_log'
import { listQuery } from '#admin/list_query'

const PER_PAGE = 50
const DAY_MS = 86_400_000

const actorRule = vine.compile(vine.object({ actor: vine.string().trim().maxLength(191) }))
const kindRule = vine.compile(
  vine.object({
    kind: vine
      .string()
      .trim()
      .maxLength(64)
      .regex(/^[a-z0-9_.]+$/),
  })
)
const dayRule = vine.compile(vine.object({ day: vine.string().regex(/^\d{4}-\d{2}-\d{2}$/) }))

/** A query-string value checked on its own: a bad one is no filter, never an error page. */
async function checked<T>(rule: { validate(data: unknown): Promise<T> }, data: unknown) {
  return rule.validate(data).catch(() => null)
}

/** Midnight UTC of a yyyy-mm-dd day, in epoch milliseconds (undefined when absent or invalid). */
async function dayOf(value: unknown): Promise<number | undefined> {
  const valid = await checked(dayRule, { day: value })
  if (!valid) return undefined
  const at = Date.parse(`${valid.day}T00:00:00Z`)
  return Number.isNaN(at) ? undefined : at
}

/** The console's filter from the query string: search, actor, kind, from and to (days, inclusive). */
async function filterOf(qs: Record<string, unknown>) {
  const { page, search } = await listQuery(qs, PER_PAGE)
  const actorField = await checked(actorRule, { actor: qs.actor })
  const kindField = await checked(kindRule, { kind: qs.kind })
  const actor = actorField?.actor || undefined
  const kind = kindField?.kind || undefined
  const from = await dayOf(qs.from)
  const to = await dayOf(qs.to)
  const filter: AuditFilter = {
    text: search || undefined,
    actor,
    kind,
    from,
    to: to === undefined ? undefined : to + DAY_MS,
  }
  return {
    page,
    filter,
    shown: {
      search,
      actor: actor ?? '',
      kind: kind ?? '',
      from: from === undefined ? '' : String(qs.from),
      to: to === undefined ? '' : String(qs.to),
    },
  }
}

/** An entry as the page shows it: plain words for its kind, its changes as one line. */
function view(record: AuditRecord) {
  return {
    id: record.id,
    at: record.at.toISOString(),
    actor: record.actorCode,
    actorId: record.actorId,
    address: record.address,
    kind: record.kind,
    what: AUDIT_KINDS[record.kind] ?? record.kind,
    target: record.targetLabel,
    targetType: record.targetType,
    changes: describeChangesPlainly(record.changes),
  }
}

/**
 * The audit log (docs/audit.md): every administrative change, searched,
 * filtered and paged on the server, and its CSV export streamed.
 */
@inject()
export default class AuditController {
  constructor(private audit: AuditLog) {}

  async index({ inertia, request }: HttpContext) {
    const { page, filter, shown } = await filterOf(request.qs())
    const entries = await this.audit.search({ ...filter, page, perPage: PER_PAGE })
    return inertia.render('audit', {
      entries: { ...entries, items: entries.items.map(view) },
      filter: shown,
      kinds: Object.entries(AUDIT_KINDS).map(([kind, label]) => ({ kind, label })),
    })
  }

  /** The entries the filter matches, as CSV, read and sent in batches (any number of them). */
  async csv({ request, response }: HttpContext) {
    const { filter } = await filterOf(request.qs())
    const day = new Date().toISOString().slice(0, 10)
    response.header('Content-Type', 'text/csv; charset=utf-8')
    response.header('Content-Disposition', `attachment; filename="audit-log-${day}.csv"`)
    response.stream(Readable.from(this.audit.exportCsv(filter)))
  }
}
