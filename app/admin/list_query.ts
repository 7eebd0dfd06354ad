import vine from '@vinejs/vine'
import type { PageRequest } from '#core/paging'

const pageRule = vine.compile(
  vine.object({ page: vine.number().withoutDecimals().min(1).max(10_000_000) })
)
const searchRule = vine.compile(vine.object({ search: vine.string().trim().maxLength(100) }))

/**
 * One list's page and search from a console page's query string: `page` and
 * `search`, or, when a page shows several lists, `<list>Page` and
 * `<list>Search` (membersPage, sesskeysSearch...). Each value is checked on
 * its own; a missing or bad one is the default (page 1, no search), never an
 * error page.
 */
export async function listQuery(
  qs: Record<string, unknown>,
  perPage: number,
  list?: string
): Promise<PageRequest & { search: string }> {
  const [pageKey, searchKey] = list ? [`${list}Page`, `${list}Search`] : ['page', 'search']
  const { page } = await pageRule.validate({ page: qs[pageKey] }).catch(() => ({ page: 1 }))
  const { search } = await searchRule
    .validate({ search: qs[searchKey] })
    .catch(() => ({ search: '' }))
  return { page, perPage, search }
}
