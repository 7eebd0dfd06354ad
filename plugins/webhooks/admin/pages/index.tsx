import { Head, Link, router, usePage } from '@inertiajs/react'
import { Card, FilterSelect, ServerList, formatDate, type PagedList } from '@console/components/ui'

interface Subscription {
  id: number
  url: string
  events: string[]
  description: string
  active: boolean
  disabledReason: string | null
  failures: number
  bookId: number
  book: string
  owner: string
  catId: number | null
  table: string | null
  created: number
}

interface Props {
  subscriptions: PagedList<Subscription>
  filter: { state: string; kind: string; book: number | null; table: number | null }
}

/** A long URL wraps in its cell (table cells do not wrap) instead of widening the table. */
const WRAP = { whiteSpace: 'normal', overflowWrap: 'anywhere', minWidth: 160 } as const

/** The page's URL with some filters changed (back to the first page). */
function withFilter(url: string, changes: Record<string, string | number | null>) {
  const [path, query = ''] = url.split('?')
  const params = new URLSearchParams(query)
  params.delete('page')
  for (const [key, value] of Object.entries(changes))
    if (value === null || value === '') params.delete(key)
    else params.set(key, String(value))
  const rest = params.toString()
  return rest ? `${path}?${rest}` : path
}

function Filters({ filter }: { filter: Props['filter'] }) {
  const { url } = usePage()
  const go = (changes: Record<string, string | number | null>) =>
    router.get(withFilter(url, changes), {}, { preserveState: true })
  return (
    <div className="row" aria-label="Filters">
      <FilterSelect
        label="State"
        name="state"
        value={filter.state}
        options={['active', 'disabled']}
        onChange={(state) => go({ state })}
      />
      <FilterSelect
        label="For"
        name="kind"
        value={filter.kind}
        all="tables and books"
        options={[
          ['table', 'tables (rows, comments)'],
          ['book', 'books (messages)'],
        ]}
        onChange={(kind) => go({ kind })}
      />
      {(filter.book || filter.table) && (
        <button type="button" onClick={() => go({ book: null, table: null })}>
          Every book and table
        </button>
      )}
    </div>
  )
}

/** Every webhook subscription, searched, filtered and paged on the server. */
export default function WebhooksIndex({ subscriptions, filter }: Props) {
  const { url } = usePage()
  const scoped = subscriptions.items[0]
  const title = filter.table
    ? `Webhooks of table ${scoped?.table ?? filter.table}`
    : filter.book
      ? `Webhooks of book ${scoped?.book ?? filter.book}`
      : 'Webhooks'
  return (
    <>
      <Head title={title} />
      <h1>{title}</h1>
      <Card>
        <p className="muted small">
          Tables' and books' administrators subscribe with createWebhook (api.php). Open one to see
          its deliveries, send them again, rotate its secret, disable or delete it.
        </p>
        <Filters filter={filter} />
        <ServerList
          list={subscriptions}
          placeholder="URL, description, book, owner or table"
          rowKey={(item) => item.id}
          rowData={(item) => ({ 'data-webhook': item.id })}
          empty="No webhook matches."
          columns={[
            {
              header: 'Webhook',
              cell: (item) => (
                <div style={WRAP}>
                  <Link href={`/admin/webhooks/${item.id}`}>#{item.id}</Link>
                  {item.active ? (
                    <span className="tag">active</span>
                  ) : (
                    <span className="tag bad" title={item.disabledReason ?? ''}>
                      disabled
                    </span>
                  )}{' '}
                  {item.url}
                  {item.description && <div className="muted small">{item.description}</div>}
                </div>
              ),
            },
            {
              header: 'Book / table',
              cell: (item) => (
                <div style={{ ...WRAP, minWidth: 120 }}>
                  <Link href={withFilter(url, { book: item.bookId, table: null })}>
                    {item.owner}/{item.book}
                  </Link>
                  {item.catId !== null && (
                    <>
                      {' › '}
                      <Link href={withFilter(url, { table: item.catId, book: null })}>
                        {item.table ?? `table ${item.catId}`}
                      </Link>
                    </>
                  )}
                </div>
              ),
            },
            {
              header: 'Events',
              cell: (item) => <div style={WRAP}>{item.events.join(', ')}</div>,
            },
            { header: 'Created', cell: (item) => formatDate(item.created) },
          ]}
        />
      </Card>
    </>
  )
}
