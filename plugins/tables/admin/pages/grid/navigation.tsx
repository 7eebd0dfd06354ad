import { router } from '@inertiajs/react'

/** `url` with some query parameters changed (undefined or '' drops one). */
export function withQuery(
  url: string,
  changes: Record<string, string | number | undefined | null>
) {
  const [path, query = ''] = url.split('?')
  const params = new URLSearchParams(query)
  for (const [key, value] of Object.entries(changes))
    if (value === undefined || value === null || value === '') params.delete(key)
    else params.set(key, String(value))
  const rest = params.toString()
  return rest ? `${path}?${rest}` : path
}

/**
 * Goes to the grid with some of its query parameters changed, keeping the page's state (open
 * editors, the column choice) and scroll; `only` reloads just those props.
 */
export function visit(
  url: string,
  changes: Record<string, string | number | undefined | null>,
  only?: string[]
) {
  router.get(
    withQuery(url, changes),
    {},
    {
      preserveState: true,
      preserveScroll: true,
      ...(only ? { only } : {}),
    }
  )
}
