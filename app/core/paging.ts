import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'

/** Which page of a list to read, and what to search it for (the admin console's lists). */
export interface PageRequest {
  page: number
  perPage: number
  search?: string
}

/** One page of a list searched and paged in SQL, with the number of matches in all. */
export interface Paged<T> {
  items: T[]
  total: number
  /** The page read: the one asked for, or the last one when it asked past the end. */
  page: number
  perPage: number
  search: string
}

/**
 * The LIKE pattern of a case-insensitive "contains" search (compare it with
 * LOWER(column)); null when there is nothing to search for. LIKE wildcards
 * typed by a user are dropped, so they match nothing special.
 */
export function containsPattern(search?: string | null): string | null {
  const term = search
    ?.trim()
    .toLowerCase()
    .replace(/[%_\\]/g, '')
  return term ? `%${term}%` : null
}

/**
 * Narrows `query` to the rows where one of `columns` contains `search`, case
 * aside (see containsPattern); without a search, the query is left as it is.
 */
export function whereContains<Query extends DatabaseQueryBuilderContract<any>>(
  query: Query,
  search: string | null | undefined,
  columns: string[]
): Query {
  const like = containsPattern(search)
  if (like)
    query.where((scope) => {
      for (const column of columns) scope.orWhereRaw(`LOWER(${column}) LIKE ?`, [like])
    })
  return query
}

/**
 * Counts what `query` matches, then reads one page of it with LIMIT/OFFSET:
 * `read` adds the order and the columns to select, `view` shapes a row. A
 * page past the last reads the last one (a list that shrank under the pager).
 */
export async function readPage<T>(
  query: DatabaseQueryBuilderContract<any>,
  request: PageRequest,
  read: (query: DatabaseQueryBuilderContract<any>) => DatabaseQueryBuilderContract<any>,
  view: (row: any) => T
): Promise<Paged<T>> {
  const counted = await query.clone().clearOrder().count('* as total').first()
  const total = Number(counted?.total ?? 0)
  const page = Math.max(1, Math.min(request.page, Math.ceil(total / request.perPage)))
  const rows = total
    ? await read(query)
        .offset((page - 1) * request.perPage)
        .limit(request.perPage)
    : []
  return {
    items: rows.map(view),
    total,
    page,
    perPage: request.perPage,
    search: request.search ?? '',
  }
}
