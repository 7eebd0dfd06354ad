import { Link, usePage } from '@inertiajs/react'
import { useEffect, useState, type FormEvent } from 'react'
import { visit, withQuery } from './navigation'

/**
 * First, previous, a page number to jump to, next and last. Pages past the last are the last
 * (the server clamps them); the links keep every other parameter of the grid.
 */
export function GridPager(props: {
  page: number
  perPage: number
  total: number
  /** A search counted up to `total` rows only: there are more (see GridSearch.countCap). */
  more?: boolean
}) {
  const { url } = usePage()
  const pages = Math.max(1, Math.ceil(props.total / props.perPage))
  const [jump, setJump] = useState(String(props.page))
  useEffect(() => setJump(String(props.page)), [props.page])
  const href = (page: number) => withQuery(url, { page: page > 1 ? page : undefined })
  const link = (page: number, label: string, rel?: 'prev' | 'next', enabled = true) =>
    enabled ? (
      <Link href={href(page)} preserveState preserveScroll rel={rel}>
        {label}
      </Link>
    ) : (
      <span className="muted" aria-disabled="true">
        {label}
      </span>
    )
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const page = Math.floor(Number(jump))
    if (Number.isFinite(page) && page >= 1) visit(url, { page: page > 1 ? page : undefined })
  }
  return (
    <nav className="pager grid-pager" aria-label="Pages" data-pager="rows">
      <span className="pager-links">
        {link(1, '« First', undefined, props.page > 1)}
        {link(props.page - 1, '‹ Previous', 'prev', props.page > 1)}
      </span>
      <span className="muted" aria-live="polite">
        Page {props.page.toLocaleString('en')} of {pages.toLocaleString('en')}
        {props.more ? '+' : ''} ·{' '}
        {props.more
          ? `more than ${props.total.toLocaleString('en')} match: narrow the search to page further`
          : `${props.total.toLocaleString('en')} in all`}
      </span>
      <form className="jump" onSubmit={submit}>
        <label className="inline-label">
          Go to page
          <input
            name="page"
            inputMode="numeric"
            value={jump}
            onChange={(event) => setJump(event.target.value)}
            size={6}
          />
        </label>
        <button type="submit">Go</button>
      </form>
      <span className="pager-links">
        {link(props.page + 1, 'Next ›', 'next', props.page < pages)}
        {link(pages, 'Last »', undefined, props.page < pages)}
      </span>
    </nav>
  )
}
